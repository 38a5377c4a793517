/** A synchronous event for the chain's listeners (the WebSocket server): one failing listener never stops the others. */

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

type Listener<T> = (value: T) => void;

export class Signal<T> {
  private readonly listeners = new Set<Listener<T>>();
  constructor(private readonly logger: Logger) {}
  on(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.logger.error({ err }, 'localnet listener failed');
      }
    }
  }
}
