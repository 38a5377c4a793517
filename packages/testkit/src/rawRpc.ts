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
