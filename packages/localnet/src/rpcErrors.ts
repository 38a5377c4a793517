/** JSON-RPC error codes used by the Solana validator (agave `rpc_custom_error.rs` + JSON-RPC 2.0). */
export const RpcErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  BLOCK_CLEANED_UP: -32001,
  SEND_TRANSACTION_PREFLIGHT_FAILURE: -32002,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE: -32003,
  BLOCK_NOT_AVAILABLE: -32004,
  SLOT_SKIPPED: -32007,
  NO_SNAPSHOT: -32008,
  UNSUPPORTED_TRANSACTION_VERSION: -32015,
  MIN_CONTEXT_SLOT_NOT_REACHED: -32016,
} as const;

/** Thrown by method handlers; the dispatcher turns it into a JSON-RPC error object. */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602 with the message as given (the validator words each case differently). */
export function invalidParams(message: string): RpcError {
  return new RpcError(RpcErrorCode.INVALID_PARAMS, message);
}

/** The validator's wording for a bad single parameter (`Invalid param: ...`). */
export function invalidParam(detail: string): RpcError {
  return new RpcError(RpcErrorCode.INVALID_PARAMS, `Invalid param: ${detail}`);
}

export function methodNotFound(): RpcError {
  return new RpcError(RpcErrorCode.METHOD_NOT_FOUND, 'Method not found');
}
