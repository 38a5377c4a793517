/**
 * A benchmark's server in a child process of its own (so that the benchmark's load generator does
 * not share its event loop), spoken to over IPC: it sends one "ready" message when it listens, and
 * answers "reset" and "stats" messages.
 */
import { fork, type ChildProcess } from 'node:child_process';

/** `env`: variables the child gets beside this process's. */
export function forkServer<Ready>(module: URL, execArgv: string[] = [], env: Readonly<Record<string, string>> = {}): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(module.pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env }, ...(execArgv.length > 0 ? { execArgv } : {}) });
  return new Promise((resolve, reject) => {
    child.once('message', (message: Ready) => resolve({ child, ready: message }));
    child.once('exit', (code, signal) => reject(new Error(`the bench server exited (code ${code}, signal ${signal})`)));
  });
}

/** Sends `type` and resolves with the child's first answer of that type. */
export function ask<T>(child: ChildProcess, type: 'reset' | 'stats'): Promise<T> {
  return new Promise((resolve) => {
    const on = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', on);
      resolve(message as T);
    };
    child.on('message', on);
    child.send({ type });
  });
}
