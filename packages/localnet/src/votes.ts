/**
 * The chain's validator votes. A test validator's blocks hold its own vote transactions: in each
 * block, the vote for the block before it, paid and signed by the node identity (which is also the
 * vote authority). Clients that look for "a block with a transaction" in the blocks of an idle
 * cluster (web3.js's own live tests do) find them there.
 *
 * The vote is a real, signed TowerSync instruction of the vote program, in its compact wire form.
 * It is recorded, not executed (its fee is charged to the identity): the vote account is a real,
 * initialized vote account, but its tower and credits do not move.
 */
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { getAddressDecoder, getAddressEncoder, getCompiledTransactionMessageEncoder, type Address, type Blockhash } from '@solana/kit';
import { FailedTransactionMetadata, type LiteSVM } from 'litesvm';
import type { TxRecord } from './records.ts';
import { parseWireTransaction, type WireTransaction } from './wire.ts';

export const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111' as Address;
/** A test validator's identity starts with 500 SOL. */
export const IDENTITY_LAMPORTS = 500_000_000_000n;
/** One signature at 5000 lamports, as every vote pays. */
export const VOTE_FEE = 5000n;
/** The vote program's compute units for a vote, as agave's builtin cost table has it. */
const VOTE_COMPUTE_UNITS = 2100n;
/** VoteStateVersions' account size (agave's `VoteState::size_of()`). */
const VOTE_STATE_SIZE = 3762;
const SYSVAR_RENT = 'SysvarRent111111111111111111111111111111111' as Address;
const SYSVAR_CLOCK = 'SysvarC1ock11111111111111111111111111111111' as Address;
/** A tower holds at most 31 lockouts; the slot pushed out of it becomes the root. */
const MAX_LOCKOUT_HISTORY = 31;
/** VoteInstruction::TowerSync's bincode enum index. */
const TOWER_SYNC = 14;

/** serde_varint (LEB128) of a u64, as the compact tower sync encodes lockout offsets. */
function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = BigInt(value);
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0n);
  return bytes;
}

/** solana_short_vec's length prefix. */
function shortVecLength(length: number): number[] {
  return varint(length);
}

export interface VotedBlock {
  readonly slot: number;
  readonly blockhash: string;
  readonly blockTime: number;
}

export class Voter {
  readonly identity: Address;
  private readonly key: KeyObject;
  /** Voted slots still in the tower, oldest first; `root` is the newest slot pushed out. */
  private tower: number[] = [];
  private root: number | null = null;

  constructor(readonly votePubkey: Address) {
    const { privateKey } = generateKeyPairSync('ed25519');
    this.key = privateKey;
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    this.identity = getAddressDecoder().decode(Buffer.from(jwk.x!, 'base64url'));
  }

  /**
   * The TowerSync instruction's data after voting on `voted`: root (u64::MAX when none), the
   * lockouts as offsets from the previous slot (from 0 for the first when there is no root) with
   * their confirmation counts (a validator voting every block: 1 for the newest, one more for
   * each older one), the voted hash, the timestamp, and the block id.
   */
  private towerSync(voted: VotedBlock): Uint8Array {
    this.tower.push(voted.slot);
    while (this.tower.length > MAX_LOCKOUT_HISTORY) this.root = this.tower.shift()!;
    const data: number[] = [TOWER_SYNC, 0, 0, 0];
    const u64 = new DataView(new ArrayBuffer(8));
    u64.setBigUint64(0, this.root === null ? 0xffff_ffff_ffff_ffffn : BigInt(this.root), true);
    data.push(...new Uint8Array(u64.buffer));
    data.push(...shortVecLength(this.tower.length));
    let previous = this.root ?? 0;
    this.tower.forEach((slot, index) => {
      data.push(...varint(slot - previous), this.tower.length - index);
      previous = slot;
    });
    // The bank hash of the voted slot: this chain's SlotHashes records its blockhash as that.
    const hash = getAddressEncoder().encode(voted.blockhash as Address);
    data.push(...hash, 1);
    u64.setBigInt64(0, BigInt(voted.blockTime), true);
    data.push(...new Uint8Array(u64.buffer));
    // The block id (the merkle root of the slot's last shred set) has no counterpart here; the
    // voted blockhash stands in for it.
    data.push(...hash);
    return new Uint8Array(data);
  }

  /** A legacy transaction of one instruction, paid and signed by the identity alone. */
  private signed(staticAccounts: Address[], readonlyNonSigners: number, lifetimeToken: string, instruction: { programAddressIndex: number; accountIndices: number[]; data: Uint8Array }): WireTransaction {
    const message = new Uint8Array(getCompiledTransactionMessageEncoder().encode({
      version: 'legacy',
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: readonlyNonSigners },
      staticAccounts,
      lifetimeToken: lifetimeToken as Blockhash,
      instructions: [instruction],
    }));
    const signature = sign(null, message, this.key);
    const bytes = new Uint8Array(1 + 64 + message.length);
    bytes[0] = 1;
    bytes.set(signature, 1);
    bytes.set(message, 65);
    return parseWireTransaction(bytes);
  }

  /**
   * Creates the vote account as a test validator's genesis has it: a real vote-program account
   * (stake can be delegated to it), initialized by the vote program itself with the identity as
   * node, voter and withdrawer, commission 0. The identity must exist and pay the fee.
   */
  initializeVoteAccount(svm: LiteSVM, blockhash: string): void {
    const lamports = svm.minimumBalanceForRentExemption(BigInt(VOTE_STATE_SIZE));
    svm.setAccount({ address: this.votePubkey, lamports: lamports as never, data: new Uint8Array(VOTE_STATE_SIZE), programAddress: VOTE_PROGRAM, executable: false, space: BigInt(VOTE_STATE_SIZE) });
    const identity = getAddressEncoder().encode(this.identity);
    // VoteInstruction::InitializeAccount(VoteInit { node_pubkey, authorized_voter, authorized_withdrawer, commission }).
    const data = new Uint8Array([0, 0, 0, 0, ...identity, ...identity, ...identity, 0]);
    const wire = this.signed([this.identity, this.votePubkey, SYSVAR_RENT, SYSVAR_CLOCK, VOTE_PROGRAM], 3, blockhash, { programAddressIndex: 4, accountIndices: [1, 2, 3, 0], data });
    const result = svm.sendTransaction(wire.transaction);
    if (result instanceof FailedTransactionMetadata) throw new Error(`cannot initialize the vote account: ${result.toString()}`);
  }

  /** The signed vote transaction on `voted`, for the block that follows it. */
  vote(voted: VotedBlock): WireTransaction {
    // TowerSync's accounts: the vote account (writable), then the vote authority (signer).
    return this.signed([this.identity, this.votePubkey, VOTE_PROGRAM], 1, voted.blockhash, { programAddressIndex: 2, accountIndices: [1, 0], data: this.towerSync(voted) });
  }
}

/** The record of a vote that landed in `slot`, with its accounts' balances around its fee. */
export function voteRecord(wire: WireTransaction, slot: number, blockTime: number, balances: { identity: bigint; voteAccount: bigint; voteProgram: bigint }): TxRecord {
  const program = `Program ${VOTE_PROGRAM}`;
  return {
    signature: wire.signature,
    slot,
    blockTime,
    err: null,
    fee: VOTE_FEE,
    preBalances: [balances.identity + VOTE_FEE, balances.voteAccount, balances.voteProgram],
    postBalances: [balances.identity, balances.voteAccount, balances.voteProgram],
    preTokenBalances: [],
    postTokenBalances: [],
    logs: [`${program} invoke [1]`, `${program} success`],
    computeUnitsConsumed: VOTE_COMPUTE_UNITS,
    innerInstructions: [],
    returnData: null,
    loadedAddresses: { writable: [], readonly: [] },
    wire,
    computeUnitPrice: 0n,
    writableAccounts: wire.message.staticAccounts.slice(0, 2),
    vote: true,
  };
}
