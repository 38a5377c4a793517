/** Raw JSON-RPC over fetch, for asserting exact wire-level replies (errors, batches, shapes). */
export interface RpcResponse {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export async function postRaw(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, text: await res.text() };
}

export async function rpcCall(url: string, method: string, params?: unknown[]): Promise<RpcResponse> {
  const { text } = await postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }));
  return JSON.parse(text) as RpcResponse;
}

/** The `result` of a call that must succeed. */
export async function rpcResult<T = unknown>(url: string, method: string, params?: unknown[]): Promise<T> {
  const reply = await rpcCall(url, method, params);
  if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
  return reply.result as T;
}

/**
 * Waits until `signature` has a status (it executed: a validator-timing chain runs a send a moment
 * after answering it), so that a warp made next confirms it rather than racing it. The 2-minute
 * bound only ends a test that would otherwise hang.
 */
export async function waitForStatus(url: string, signature: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { value } = await rpcResult<{ value: (unknown | null)[] }>(url, 'getSignatureStatuses', [[signature]]);
    if (value[0] !== null) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${signature} to execute`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
