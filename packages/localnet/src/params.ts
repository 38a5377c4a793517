/** Validation of JSON-RPC params; failures become -32602 errors worded like the validator's. */
import { getBase58Encoder, isAddress, type Address } from '@solana/kit';
import type { Chain } from './chain.ts';
import { invalidParam, invalidParams, RpcError, RpcErrorCode } from './rpcErrors.ts';

export type Commitment = 'processed' | 'confirmed' | 'finalized';
export type Config = Record<string, unknown>;

export function asParamList(params: unknown): unknown[] {
  if (params === undefined || params === null) return [];
  if (!Array.isArray(params)) throw invalidParams('Invalid params: invalid type: map, expected a sequence');
  return params;
}

/**
 * Refuses more positional params than the method takes, as the validator's jsonrpc-derive
 * handlers do: a method with optional trailing params answers "Expected from <required> to
 * <total> parameters." (data: the count, as Rust's Debug prints a String), one that takes none
 * "No parameters were expected" (its data, Rust's Debug of the params, is left out here).
 */
export function refuseExtraParams(params: unknown[], required: number, total: number): void {
  if (params.length <= total) return;
  if (total === 0) throw new RpcError(RpcErrorCode.INVALID_PARAMS, 'Invalid parameters: No parameters were expected');
  throw new RpcError(RpcErrorCode.INVALID_PARAMS, `Invalid parameters: Expected from ${required} to ${total} parameters.`, `"Got: ${params.length}"`);
}

export function requireParam(params: unknown[], index: number, what: string): unknown {
  if (params[index] === undefined) throw invalidParams(`Invalid params: missing ${what}.`);
  return params[index];
}

export function configParam(params: unknown[], index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParams('Invalid params: invalid type: expected a config object.');
  return value as Config;
}

export function stringParam(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalidParams(`Invalid params: invalid type: ${what} must be a string.`);
  return value;
}

export function addressParam(value: unknown): Address {
  if (typeof value !== 'string' || !isAddress(value)) throw invalidParam('Invalid');
  return value;
}

/** A 32-byte base58 value such as a blockhash. */
export function hashParam(value: unknown): string {
  return addressParam(value);
}

export function signatureParam(value: unknown): string {
  if (typeof value !== 'string' || value.length > 88) throw invalidParam('Invalid');
  try {
    if (getBase58Encoder().encode(value).length === 64) return value;
  } catch {
    // fall through
  }
  throw invalidParam('Invalid');
}

/**
 * u64 from JSON. Requests are parsed with JSON.parse, so integers above 2^53 cannot be
 * represented exactly; they are refused rather than silently rounded.
 */
export function u64Param(value: unknown, what: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^(0|[1-9][0-9]{0,19})$/.test(value) && BigInt(value) <= 0xffff_ffff_ffff_ffffn) return BigInt(value);
  throw invalidParams(`Invalid params: ${what} must be an unsigned integer no larger than 2^53 - 1.`);
}

export function boolOption(config: Config, key: string, fallback: boolean): boolean {
  const value = config[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalidParams(`Invalid params: invalid type: ${key} must be a boolean.`);
  return value;
}

export function commitmentOption(config: Config, key = 'commitment'): Commitment {
  const value = config[key];
  if (value === undefined || value === null) return 'finalized';
  if (value === 'processed' || value === 'confirmed' || value === 'finalized') return value;
  // Deprecated aliases still accepted by the validator.
  if (value === 'recent' || value === 'single' || value === 'singleGossip') return 'processed';
  if (value === 'max' || value === 'root') return 'finalized';
  throw invalidParams(`Invalid params: unknown variant \`${String(value)}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`);
}

/**
 * Checks the `commitment` and `minContextSlot` options every read method accepts. The local chain
 * has a single state, so all commitments read it.
 */
export function checkContext(chain: Chain, config: Config): void {
  commitmentOption(config);
  if (config.minContextSlot !== undefined && config.minContextSlot !== null) {
    const minContextSlot = u64Param(config.minContextSlot, 'minContextSlot');
    if (minContextSlot > BigInt(chain.slot)) {
      throw new RpcError(RpcErrorCode.MIN_CONTEXT_SLOT_NOT_REACHED, 'Minimum context slot has not been reached', { contextSlot: chain.slot });
    }
  }
}

export function arrayParam(value: unknown, what: string, max: number): unknown[] {
  if (!Array.isArray(value)) throw invalidParams(`Invalid params: invalid type: ${what} must be an array.`);
  if (value.length > max) throw invalidParams(`Too many inputs provided; max ${max}`);
  return value;
}
