/** Sending, simulating and looking up transactions; fees; the faucet. */
import { encodeAccount, encodingOption, readAccount } from './accounts.ts';
import type { Chain, TxRecord } from './chain.ts';
import {
  addressParam,
  arrayParam,
  boolOption,
  checkContext,
  commitmentOption,
  configParam,
  requireParam,
  signatureParam,
  stringParam,
  u64Param,
  type Config,
} from './params.ts';
import { withContext, type RpcMethodTable } from './rpcContext.ts';
import { invalidParams, RpcError, RpcErrorCode } from './rpcErrors.ts';
import type { Faucet } from './faucet.ts';
import { feeForMessage, simulateTransaction, submitTransaction, type SendHold } from './transactions.ts';
import { encodeTransactionWithMeta, parsedInnerInstructions, transactionEncodingOption } from './txEncoding.ts';
import { decodeMessageText, decodeTransactionText, WireError, type BinaryEncoding, type DecodedMessage, type WireTransaction } from './wire.ts';
import { isFeatureActive, V1_TRANSACTIONS_FEATURE } from './features.ts';

const MAX_SIGNATURE_STATUSES = 256;
const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;


function binaryEncoding(config: Config): BinaryEncoding {
  const encoding = config.encoding ?? 'base58';
  if (encoding === 'base58' || encoding === 'base64') return encoding;
  throw invalidParams(`Invalid params: unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
}

/** Before the v1 gate is active the validator cannot deserialize a 0x81 envelope at all. */
function refuseV1WithoutGate(chain: Chain, message: DecodedMessage, kind: string): void {
  if (message.version === 1 && !isFeatureActive(chain, V1_TRANSACTIONS_FEATURE)) {
    throw invalidParams(`failed to deserialize ${kind}: unsupported transaction format`);
  }
}

function decodeTransaction(chain: Chain, params: unknown[], config: Config): WireTransaction {
  const text = stringParam(requireParam(params, 0, 'transaction'), 'transaction');
  try {
    const wire = decodeTransactionText(text, binaryEncoding(config));
    refuseV1WithoutGate(chain, wire.message, 'solana_transaction::versioned::VersionedTransaction');
    return wire;
  } catch (err) {
    if (err instanceof WireError) throw invalidParams(err.message);
    throw err;
  }
}

function statusOf(chain: Chain, record: TxRecord) {
  return {
    slot: record.slot,
    ...chain.confirmationOf(record),
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
  };
}

function getTransaction(chain: Chain, params: unknown[]) {
  const signature = signatureParam(requireParam(params, 0, 'signature'));
  // The second param may also be a bare encoding string (deprecated form).
  const config: Config = typeof params[1] === 'string' ? { encoding: params[1] } : configParam(params, 1);
  const commitment = commitmentOption(config);
  if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  const encoding = transactionEncodingOption(config.encoding);
  const maxVersion = config.maxSupportedTransactionVersion;
  checkMaxVersionParam(maxVersion);
  const record = chain.records.get(signature);
  if (!record || !record.wire) return null;
  // Served from the confirmed (or finalized) bank: a transaction only processed is not there yet.
  if (record.slot > chain.slotAt(commitment)) return null;
  checkVersionSupported(record.wire.message.version, maxVersion);
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    ...encodeTransactionWithMeta({ ...record, wire: record.wire }, encoding, maxVersion === 0 || maxVersion === 1),
  };
}

/** The highest version a client may declare: 1 since the v1 format (SIMD-0385). */
export const MAX_TRANSACTION_VERSION = 1;

export function checkMaxVersionParam(maxVersion: unknown): void {
  if (maxVersion !== undefined && maxVersion !== null && maxVersion !== 0 && maxVersion !== 1) {
    throw invalidParams(`Invalid params: maxSupportedTransactionVersion must be at most ${MAX_TRANSACTION_VERSION}.`);
  }
}

/**
 * A versioned transaction needs the client to say it understands that version (as the validator
 * requires): v0 needs `maxSupportedTransactionVersion` 0 or more, v1 needs 1.
 */
export function checkVersionSupported(version: 'legacy' | 0 | 1, maxVersion: unknown): void {
  if (version === 'legacy') return;
  const declared = typeof maxVersion === 'number' ? maxVersion : -1;
  if (declared < version) {
    throw new RpcError(
      RpcErrorCode.UNSUPPORTED_TRANSACTION_VERSION,
      `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
    );
  }
}

/** `hold`: the test-mode fault that keeps sent transactions in flight for a while (faults.ts). */
export function transactionMethods(chain: Chain, faucet: Faucet, hold?: SendHold): RpcMethodTable {
  return {
    sendTransaction(params) {
      const config = configParam(params, 1);
      const wire = decodeTransaction(chain, params, config);
      commitmentOption(config, 'preflightCommitment');
      checkContext(chain, { minContextSlot: config.minContextSlot });
      if (config.maxRetries !== undefined && config.maxRetries !== null) u64Param(config.maxRetries, 'maxRetries');
      const outcome = submitTransaction(chain, wire, { skipPreflight: boolOption(config, 'skipPreflight', false), hold });
      switch (outcome.kind) {
        case 'accepted':
          return outcome.signature;
        case 'invalid':
          throw invalidParams(outcome.message);
        case 'signatureFailure':
          throw new RpcError(RpcErrorCode.TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, 'Transaction signature verification failure');
        case 'preflightFailure': {
          const { err, logs, unitsConsumed, returnData } = outcome.simulation;
          throw new RpcError(RpcErrorCode.SEND_TRANSACTION_PREFLIGHT_FAILURE, outcome.message, {
            accounts: null,
            err,
            innerInstructions: null,
            logs,
            replacementBlockhash: null,
            returnData,
            unitsConsumed,
          });
        }
      }
    },

    simulateTransaction(params) {
      const config = configParam(params, 1);
      const wire = decodeTransaction(chain, params, config);
      checkContext(chain, config);
      const sigVerify = boolOption(config, 'sigVerify', false);
      const withInnerInstructions = boolOption(config, 'innerInstructions', false);
      const replaceRecentBlockhash = boolOption(config, 'replaceRecentBlockhash', false);
      if (sigVerify && replaceRecentBlockhash) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      const accountsConfig = config.accounts as { addresses?: unknown; encoding?: unknown } | undefined | null;
      const keyCount = wire.message.staticAccounts.length +
        (wire.message.version === 0 ? (wire.message.addressTableLookups ?? []).reduce((n, l) => n + l.readonlyIndexes.length + l.writableIndexes.length, 0) : 0);
      const requested = accountsConfig ? arrayParam(accountsConfig.addresses, 'accounts.addresses', keyCount).map(addressParam) : null;
      const accountEncoding = accountsConfig ? encodingOption({ encoding: accountsConfig.encoding ?? 'base64' }, 'base64') : 'base64';
      if (accountEncoding === 'base58' || accountEncoding === 'binary') throw invalidParams('base58 encoding not supported');

      const result = simulateTransaction(chain, wire, { sigVerify, replaceRecentBlockhash });
      const accounts = requested?.map((address) => {
        const post = result.postAccounts.find((a) => a.address === address);
        const account = post ? { ...post, owner: post.owner as string } : readAccount(chain, address);
        return account && (account.lamports > 0n || account.data.length > 0) ? encodeAccount(chain, account, accountEncoding, null) : null;
      });
      return withContext(chain, {
        err: result.err,
        logs: result.logs,
        accounts: accounts ?? null,
        unitsConsumed: result.unitsConsumed,
        returnData: result.returnData,
        // Parsed (jsonParsed) like agave's simulate_transaction; null unless asked for.
        innerInstructions: withInnerInstructions ? parsedInnerInstructions(result.innerInstructions, result.accountKeys) : null,
        replacementBlockhash: result.replacementBlockhash ?? null,
        loadedAccountsDataSize: result.loadedAccountsDataSize,
      });
    },

    getSignatureStatuses(params) {
      const signatures = arrayParam(requireParam(params, 0, 'signatures'), 'signatures', MAX_SIGNATURE_STATUSES).map(signatureParam);
      const config = configParam(params, 1);
      boolOption(config, 'searchTransactionHistory', false);
      return withContext(chain, signatures.map((signature) => {
        const record = chain.records.get(signature);
        return record ? statusOf(chain, record) : null;
      }));
    },

    getTransaction(params) {
      return getTransaction(chain, params);
    },

    getFeeForMessage(params) {
      const text = stringParam(requireParam(params, 0, 'message'), 'message');
      checkContext(chain, configParam(params, 1));
      try {
        const message = decodeMessageText(text);
        refuseV1WithoutGate(chain, message, 'solana_message::versioned::VersionedMessage');
        return withContext(chain, feeForMessage(chain, message));
      } catch (err) {
        if (err instanceof WireError) throw invalidParams(err.message);
        throw err;
      }
    },

    getRecentPrioritizationFees(params) {
      const accounts = params[0] === undefined || params[0] === null
        ? []
        : arrayParam(params[0], 'accounts', MAX_PRIORITIZATION_FEE_ACCOUNTS).map(addressParam);
      return chain.records.prioritizationFees(accounts, chain.slot);
    },

    requestAirdrop(params) {
      const recipient = addressParam(requireParam(params, 0, 'address'));
      const lamports = u64Param(requireParam(params, 1, 'lamports'), 'lamports');
      checkContext(chain, configParam(params, 2));
      return faucet.airdrop(recipient, lamports);
    },
  };
}
