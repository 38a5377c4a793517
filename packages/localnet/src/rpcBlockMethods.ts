/**
 * Blocks and history: getBlock, getBlockTime, getBlocks, getBlocksWithLimit, getBlockCommitment,
 * getFirstAvailableBlock, getSignaturesForAddress (and agave 1.18's getConfirmedSignaturesForAddress2), getRecentPerformanceSamples. Shapes and error
 * codes follow agave `rpc.rs` / `rpc_custom_error.rs`.
 */
import type { BlockInfo, Chain, TxRecord } from './chain.ts';
import { MEMO_PROGRAMS } from './parsedInstructions.ts';
import { addressParam, checkContext, commitmentOption, configParam, requireParam, signatureParam, u64Param, type Config } from './params.ts';
import type { RpcMethodTable } from './rpcContext.ts';
import { invalidParams, RpcError, RpcErrorCode } from './rpcErrors.ts';
import { checkMaxVersionParam, checkVersionSupported } from './rpcTransactionMethods.ts';
import { encodeTransactionWithMeta, transactionEncodingOption } from './txEncoding.ts';

const MAX_GET_CONFIRMED_BLOCKS_RANGE = 500_000;
const MAX_SIGNATURES_FOR_ADDRESS = 1_000;
const MAX_PERFORMANCE_SAMPLES = 720;
const SAMPLE_PERIOD_SECS = 60;

function slotParam(value: unknown, what: string): number {
  const slot = u64Param(value, what);
  if (slot > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidParams(`Invalid params: ${what} is too large.`);
  return Number(slot);
}

/** getBlock and getBlockTime only serve confirmed data; both reject `processed` like the validator. */
function confirmedCommitment(config: Config): 'confirmed' | 'finalized' {
  const commitment = commitmentOption(config);
  if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  return commitment;
}

/** The block of `slot`, or the validator's error for a slot that has none. */
function blockOrError(chain: Chain, slot: number, commitment: 'confirmed' | 'finalized'): BlockInfo {
  if (slot > chain.slotAt(commitment)) throw new RpcError(RpcErrorCode.BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
  if (slot < chain.firstAvailableBlock) {
    throw new RpcError(RpcErrorCode.BLOCK_CLEANED_UP, `Block ${slot} cleaned up, does not exist on node. First available block: ${chain.firstAvailableBlock}`);
  }
  const block = chain.getBlock(slot);
  if (!block) throw new RpcError(RpcErrorCode.SLOT_SKIPPED, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  return block;
}

function getBlock(chain: Chain, params: unknown[]) {
  const slot = slotParam(requireParam(params, 0, 'slot'), 'slot');
  // The second param may also be a bare encoding string (deprecated form).
  const config: Config = typeof params[1] === 'string' ? { encoding: params[1] } : configParam(params, 1);
  const commitment = confirmedCommitment(config);
  const encoding = transactionEncodingOption(config.encoding);
  const details = config.transactionDetails ?? 'full';
  if (details !== 'full' && details !== 'signatures' && details !== 'none' && details !== 'accounts') {
    throw invalidParams(`Invalid params: unknown variant \`${String(details)}\`, expected one of \`full\`, \`signatures\`, \`none\`, \`accounts\`.`);
  }
  const rewards = config.rewards ?? true;
  if (typeof rewards !== 'boolean') throw invalidParams('Invalid params: invalid type: rewards must be a boolean.');
  const maxVersion = config.maxSupportedTransactionVersion;
  checkMaxVersionParam(maxVersion);
  const withVersion = maxVersion === 0 || maxVersion === 1;
  const block = blockOrError(chain, slot, commitment);

  // Faucet airdrops have no wire bytes (LiteSVM signs them itself): they cannot be shown in full.
  const records = block.signatures.flatMap((signature) => {
    const record = chain.records.get(signature);
    return record?.wire ? [{ ...record, wire: record.wire }] : [];
  });
  const body: Record<string, unknown> = {
    blockHeight: block.slot,
    blockTime: block.blockTime,
    blockhash: block.blockhash,
    parentSlot: block.parentSlot,
    previousBlockhash: block.previousBlockhash,
  };
  if (details === 'full' || details === 'accounts') {
    for (const record of records) checkVersionSupported(record.wire.message.version, maxVersion);
  }
  if (details === 'full') {
    body.transactions = records.map((record) => encodeTransactionWithMeta(record, encoding, withVersion));
  } else if (details === 'accounts') {
    body.transactions = records.map((record) => {
      const full = encodeTransactionWithMeta(record, 'jsonParsed', withVersion);
      const { err, status, fee, preBalances, postBalances, preTokenBalances, postTokenBalances } = full.meta;
      const transaction = full.transaction as { signatures: string[]; message: { accountKeys: unknown[] } };
      return {
        transaction: { signatures: transaction.signatures, accountKeys: transaction.message.accountKeys },
        meta: { err, status, fee, preBalances, postBalances, preTokenBalances, postTokenBalances },
        ...(withVersion ? { version: record.wire.message.version } : {}),
      };
    });
  } else if (details === 'signatures') {
    body.signatures = block.signatures;
  }
  if (rewards) body.rewards = [];
  return body;
}

function getSignaturesForAddress(chain: Chain, params: unknown[]) {
  const target = addressParam(requireParam(params, 0, 'address'));
  const config = configParam(params, 1);
  const commitment = confirmedCommitment(config);
  checkContext(chain, config);
  const limit = config.limit === undefined || config.limit === null ? MAX_SIGNATURES_FOR_ADDRESS : Number(u64Param(config.limit, 'limit'));
  if (limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS) throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
  const before = config.before === undefined || config.before === null ? null : signatureParam(config.before);
  const until = config.until === undefined || config.until === null ? null : signatureParam(config.until);
  const highestSlot = chain.slotAt(commitment);
  let signatures = chain.records.signaturesFor(target);
  if (before !== null) {
    const at = signatures.indexOf(before);
    // Unknown `before`: the validator answers nothing older than it knows of, i.e. an empty list.
    signatures = at === -1 ? [] : signatures.slice(at + 1);
  }
  const result = [];
  for (const signature of signatures) {
    if (signature === until || result.length >= limit) break;
    const record = chain.records.get(signature);
    if (!record || record.slot > highestSlot) continue;
    result.push({
      signature,
      slot: record.slot,
      err: record.err,
      memo: memoOf(record),
      blockTime: record.blockTime,
      confirmationStatus: chain.confirmationOf(record).confirmationStatus,
    });
  }
  return result;
}

/**
 * agave `extract_and_fmt_memos`: the data of each top-level Memo instruction as "[length] text",
 * joined with "; ", or null without one.
 */
function memoOf(record: TxRecord): string | null {
  if (!record.wire) return null;
  const message = record.wire.message;
  const memos = message.instructions.flatMap((ix) => {
    if (!MEMO_PROGRAMS.has(message.staticAccounts[ix.programAddressIndex] ?? '')) return [];
    const data = ix.data ?? new Uint8Array();
    return [`[${data.length}] ${new TextDecoder().decode(data)}`];
  });
  return memos.length > 0 ? memos.join('; ') : null;
}

/** 60-second samples of the recent blocks, newest first (agave takes one every 60 s). */
function performanceSamples(chain: Chain, limit: number) {
  const samples: { slot: number; numSlots: number; numTransactions: number; numNonVoteTransactions: number; samplePeriodSecs: number }[] = [];
  let end = chain.slot;
  const first = chain.firstAvailableBlock;
  while (samples.length < limit && end >= first) {
    const endBlock = chain.blockAtOrBefore(end);
    if (!endBlock) break;
    let start = endBlock.slot;
    let transactions = 0;
    let votes = 0;
    for (let s = endBlock.slot; s >= first; s--) {
      const block = chain.getBlock(s);
      if (block && endBlock.blockTime - block.blockTime >= SAMPLE_PERIOD_SECS) break;
      start = s - 1;
      transactions += block?.signatures.length ?? 0;
      for (const signature of block?.signatures ?? []) if (chain.records.get(signature)?.vote) votes++;
    }
    const numSlots = endBlock.slot - start;
    if (numSlots <= 0) break;
    samples.push({ slot: endBlock.slot, numSlots, numTransactions: transactions, numNonVoteTransactions: transactions - votes, samplePeriodSecs: SAMPLE_PERIOD_SECS });
    end = start;
  }
  return samples;
}

export function blockMethods(chain: Chain): RpcMethodTable {
  return {
    getBlock(params) {
      return getBlock(chain, params);
    },

    getBlockTime(params) {
      const slot = slotParam(requireParam(params, 0, 'slot'), 'slot');
      return blockOrError(chain, slot, 'confirmed').blockTime;
    },

    getBlocks(params) {
      const start = slotParam(requireParam(params, 0, 'start slot'), 'start slot');
      // The end slot is optional; a config object may take its place.
      const hasEnd = typeof params[1] === 'number' || typeof params[1] === 'string';
      const config = configParam(params, hasEnd ? 2 : 1);
      const commitment = confirmedCommitment(config);
      const highest = chain.slotAt(commitment);
      const end = Math.min(hasEnd ? slotParam(params[1], 'end slot') : highest, highest);
      if (end - start > MAX_GET_CONFIRMED_BLOCKS_RANGE) throw invalidParams(`Slot range too large; max ${MAX_GET_CONFIRMED_BLOCKS_RANGE}`);
      return chain.blockSlots(start, end, MAX_GET_CONFIRMED_BLOCKS_RANGE);
    },

    getBlocksWithLimit(params) {
      const start = slotParam(requireParam(params, 0, 'start slot'), 'start slot');
      const limit = slotParam(requireParam(params, 1, 'limit'), 'limit');
      if (limit > MAX_GET_CONFIRMED_BLOCKS_RANGE) throw invalidParams(`Limit too large; max ${MAX_GET_CONFIRMED_BLOCKS_RANGE}`);
      const commitment = confirmedCommitment(configParam(params, 2));
      return chain.blockSlots(start, chain.slotAt(commitment), limit);
    },

    getBlockCommitment(params) {
      const slot = slotParam(requireParam(params, 0, 'slot'), 'slot');
      // One validator holds all the stake; a block it has produced is voted on by it alone.
      return { commitment: chain.getBlock(slot) ? Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0)) : null, totalStake: 1 };
    },

    getFirstAvailableBlock() {
      return chain.firstAvailableBlock;
    },

    getSignaturesForAddress(params) {
      return getSignaturesForAddress(chain, params);
    },

    // Removed from agave in 2.0, still called by web3.js v1 (getConfirmedSignaturesForAddress and
    // getConfirmedSignaturesForAddress2): agave 1.18 answered it as getSignaturesForAddress.
    getConfirmedSignaturesForAddress2(params) {
      return getSignaturesForAddress(chain, params);
    },

    getRecentPerformanceSamples(params) {
      const limit = params[0] === undefined || params[0] === null ? MAX_PERFORMANCE_SAMPLES : Number(u64Param(params[0], 'limit'));
      if (limit > MAX_PERFORMANCE_SAMPLES) throw invalidParams(`Invalid limit; max ${MAX_PERFORMANCE_SAMPLES}`);
      return performanceSamples(chain, limit);
    },
  };
}
