/**
 * A landed transaction with its status meta, as getTransaction and getBlock return it (agave
 * `EncodedTransactionWithStatusMeta`) in the json, jsonParsed, base64 and base58 encodings.
 */
import { getBase58Decoder, getBase58Encoder, getBase64Decoder } from '@solana/kit';
import type { InnerInstructionsJson, TxRecord } from './chain.ts';
import { parseInstruction, type UiParsedInstruction } from './parsedInstructions.ts';
import { invalidParams } from './rpcErrors.ts';
import { signaturesOf, type DecodedMessage, type WireTransaction } from './wire.ts';

export type TransactionEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

const base58 = getBase58Decoder();
const base58Bytes = getBase58Encoder();
const base64 = getBase64Decoder();

export function transactionEncodingOption(value: unknown, fallback: TransactionEncoding = 'json'): TransactionEncoding {
  const encoding = value ?? fallback;
  if (encoding === 'json' || encoding === 'jsonParsed' || encoding === 'base64' || encoding === 'base58') return encoding;
  if (encoding === 'binary') return 'base58';
  throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\`.`);
}

/** Static keys, then the writable and the readonly keys loaded from lookup tables. */
export function accountKeysOf(record: TxRecord, message: DecodedMessage): string[] {
  return [...message.staticAccounts, ...record.loadedAddresses.writable, ...record.loadedAddresses.readonly];
}

/** The message's instructions as getTransaction's "json" encoding shows them. */
export function transactionJson(wire: WireTransaction) {
  const message = wire.message;
  return {
    signatures: signaturesOf(wire),
    message: {
      accountKeys: message.staticAccounts,
      header: {
        numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
        numRequiredSignatures: message.header.numSignerAccounts,
      },
      instructions: message.instructions.map((ix) => ({
        accounts: ix.accountIndices ?? [],
        data: base58.decode(ix.data ?? new Uint8Array()),
        programIdIndex: ix.programAddressIndex,
        stackHeight: null,
      })),
      recentBlockhash: message.lifetimeToken,
      ...versionFields(message),
    },
  };
}

/**
 * What a message of each version adds: v0 its lookups, v1 its config (solana-message
 * `v1::TransactionConfig`, serde camelCase, an unset field null).
 */
function versionFields(message: DecodedMessage) {
  if (message.version === 0) return { addressTableLookups: addressTableLookupsOf(message) };
  if (message.version === 1) {
    const { priorityFeeLamports, computeUnitLimit, loadedAccountsDataSizeLimit, heapSize } = message.config;
    return {
      config: {
        priorityFee: priorityFeeLamports ?? null,
        computeUnitLimit: computeUnitLimit ?? null,
        loadedAccountsDataSizeLimit: loadedAccountsDataSizeLimit ?? null,
        heapSize: heapSize ?? null,
      },
    };
  }
  return {};
}

function addressTableLookupsOf(message: Extract<DecodedMessage, { version: 0 }>) {
  return (message.addressTableLookups ?? []).map((lookup) => ({
    accountKey: lookup.lookupTableAddress,
    readonlyIndexes: lookup.readonlyIndexes,
    writableIndexes: lookup.writableIndexes,
  }));
}

/** agave `parse_accounts` / `parse_v0_message_accounts`: who signs, who is writable, where each key came from. */
function parsedAccountKeys(record: TxRecord, message: DecodedMessage) {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const count = message.staticAccounts.length;
  const invoked = new Set(message.instructions.map((ix) => ix.programAddressIndex));
  const fromMessage = message.staticAccounts.map((pubkey, i) => {
    const writableByHeader = i < numSignerAccounts ? i < numSignerAccounts - numReadonlySignerAccounts : i < count - numReadonlyNonSignerAccounts;
    return { pubkey, writable: writableByHeader && !invoked.has(i), signer: i < numSignerAccounts, source: 'transaction' as const };
  });
  const loaded = [
    ...record.loadedAddresses.writable.map((pubkey) => ({ pubkey, writable: true, signer: false, source: 'lookupTable' as const })),
    ...record.loadedAddresses.readonly.map((pubkey) => ({ pubkey, writable: false, signer: false, source: 'lookupTable' as const })),
  ];
  return [...fromMessage, ...loaded];
}

export function parsedInnerInstructions(inner: readonly InnerInstructionsJson[], keys: readonly string[]) {
  return inner.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map(
      (ix): UiParsedInstruction =>
        parseInstruction({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: new Uint8Array(base58Bytes.encode(ix.data)), stackHeight: ix.stackHeight }, keys),
    ),
  }));
}

function transactionParsed(record: TxRecord, wire: WireTransaction) {
  const message = wire.message;
  const keys = accountKeysOf(record, message);
  return {
    signatures: signaturesOf(wire),
    message: {
      accountKeys: parsedAccountKeys(record, message),
      instructions: message.instructions.map((ix) =>
        parseInstruction({ programIdIndex: ix.programAddressIndex, accounts: ix.accountIndices ?? [], data: new Uint8Array(ix.data ?? []), stackHeight: null }, keys),
      ),
      recentBlockhash: message.lifetimeToken,
      ...versionFields(message),
    },
  };
}

export function metaOf(record: TxRecord, encoding: TransactionEncoding, keys: readonly string[]) {
  const parsed = encoding === 'jsonParsed';
  return {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    innerInstructions: parsed ? parsedInnerInstructions(record.innerInstructions, keys) : record.innerInstructions,
    logMessages: record.logs,
    preTokenBalances: record.preTokenBalances,
    postTokenBalances: record.postTokenBalances,
    rewards: [],
    // agave leaves loadedAddresses out of the jsonParsed meta (the parsed account keys carry them).
    ...(parsed ? {} : { loadedAddresses: record.loadedAddresses }),
    computeUnitsConsumed: record.computeUnitsConsumed,
    ...(record.returnData ? { returnData: record.returnData } : {}),
  };
}

/** `{ transaction, meta, version? }` of a recorded transaction (one that has wire bytes). */
export function encodeTransactionWithMeta(record: TxRecord & { wire: WireTransaction }, encoding: TransactionEncoding, withVersion: boolean) {
  const wire = record.wire;
  const keys = accountKeysOf(record, wire.message);
  const transaction =
    encoding === 'json'
      ? transactionJson(wire)
      : encoding === 'jsonParsed'
        ? transactionParsed(record, wire)
        : [encoding === 'base64' ? base64.decode(wire.bytes) : base58.decode(wire.bytes), encoding];
  return {
    transaction,
    meta: metaOf(record, encoding, keys),
    ...(withVersion ? { version: wire.message.version } : {}),
  };
}
