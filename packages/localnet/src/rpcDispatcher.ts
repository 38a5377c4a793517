/**
 * JSON-RPC 2.0 over a request body: parsing, batches, notifications, error mapping.
 *
 * Every call goes through `intercept` (identity by default) — the single place where request
 * rewriting or fault injection (dropped requests, delays, injected errors) can be added later.
 */
import type { Logger } from './chain.ts';
import { stringifyJson } from './json.ts';
import { asParamList } from './params.ts';
import type { RpcHandler } from './rpcContext.ts';
import { methodNotFound, RpcError, RpcErrorCode } from './rpcErrors.ts';

export type JsonRpcId = string | number | null;

export interface RpcCall {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params: unknown;
}

export type RpcReply = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

export type RpcInterceptor = (call: RpcCall, next: (call: RpcCall) => Promise<RpcReply>) => Promise<RpcReply>;

export type RpcMethods = ReadonlyMap<string, RpcHandler>;

const passThrough: RpcInterceptor = (call, next) => next(call);

function errorReply(err: unknown, logger: Logger, method: string): RpcReply {
  if (err instanceof RpcError) {
    return { error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
  }
  logger.error({ err, method }, 'localnet RPC method failed');
  return { error: { code: RpcErrorCode.INTERNAL_ERROR, message: 'Internal error' } };
}

export function createDispatcher(methods: RpcMethods, logger: Logger, intercept: RpcInterceptor = passThrough) {
  async function invoke(call: RpcCall): Promise<RpcReply> {
    try {
      const handler = methods.get(call.method);
      if (!handler) throw methodNotFound();
      return { result: await handler(asParamList(call.params)) };
    } catch (err) {
      return errorReply(err, logger, call.method);
    }
  }

  async function handleOne(request: unknown): Promise<object | null> {
    const r = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | null;
    const idValid = (id: unknown): id is JsonRpcId | undefined =>
      id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
    if (typeof r !== 'object' || r === null || Array.isArray(r) || r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !idValid(r.id)) {
      return { jsonrpc: '2.0', error: { code: RpcErrorCode.INVALID_REQUEST, message: 'Invalid request' }, id: null };
    }
    const isNotification = r.id === undefined;
    const call: RpcCall = { id: r.id ?? null, method: r.method, params: r.params };
    let reply: RpcReply;
    try {
      reply = await intercept(call, invoke);
    } catch (err) {
      reply = errorReply(err, logger, call.method);
    }
    return isNotification ? null : { jsonrpc: '2.0', ...reply, id: call.id };
  }

  /** Returns the response body, or null when nothing is to be sent (only notifications). */
  return async function dispatch(body: string): Promise<string | null> {
    let request: unknown;
    try {
      request = JSON.parse(body);
    } catch {
      return stringifyJson({ jsonrpc: '2.0', error: { code: RpcErrorCode.PARSE_ERROR, message: 'Parse error' }, id: null });
    }
    if (Array.isArray(request)) {
      if (request.length === 0) {
        return stringifyJson({ jsonrpc: '2.0', error: { code: RpcErrorCode.INVALID_REQUEST, message: 'Invalid request' }, id: null });
      }
      // Sequentially: calls in a batch see each other's effects in order, as on the validator.
      const replies: object[] = [];
      for (const item of request) {
        const reply = await handleOne(item);
        if (reply) replies.push(reply);
      }
      return replies.length > 0 ? stringifyJson(replies) : null;
    }
    const reply = await handleOne(request);
    return reply ? stringifyJson(reply) : null;
  };
}
