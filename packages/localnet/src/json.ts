/**
 * JSON text for RPC replies. The validator writes u64 values (lamports, slots, fees) as bare JSON
 * integers and @solana/kit parses every integer back into a bigint, so bigint must be written
 * as digits — never as a string, and never through `Number` (which loses precision above 2^53).
 */
export function stringifyJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  switch (typeof value) {
    case 'bigint':
      out.push(value.toString());
      return;
    case 'number':
      out.push(Number.isFinite(value) ? String(value) : 'null');
      return;
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'object':
      if (value === null) {
        out.push('null');
      } else if (Array.isArray(value)) {
        out.push('[');
        value.forEach((item, i) => {
          if (i > 0) out.push(',');
          write(item === undefined ? null : item, out);
        });
        out.push(']');
      } else {
        out.push('{');
        let first = true;
        for (const [key, item] of Object.entries(value)) {
          if (item === undefined || typeof item === 'function') continue;
          if (!first) out.push(',');
          first = false;
          out.push(JSON.stringify(key), ':');
          write(item, out);
        }
        out.push('}');
      }
      return;
    default:
      out.push('null');
  }
}
