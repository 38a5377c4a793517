/**
 * The accounts of the token programs as last written, indexed by owner and delegate, so that
 * getTokenAccountsByOwner / ByDelegate read one holder's accounts instead of scanning every account
 * of the token programs (0.2–0.5 s per query with a few thousand accounts, on the event loop that
 * `npm start` shares with the service).
 */
import type { Address } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { decodeTokenAccount, isTokenProgram } from './jsonParsed.ts';

/** An account of a token program as stored (the shape of accounts.ts's RawAccount). */
export interface TokenAccountSnapshot {
  readonly lamports: bigint;
  readonly data: Uint8Array;
  readonly owner: Address;
  readonly executable: boolean;
}

export class TokenAccountIndex {
  private readonly byHolder = { owner: new Map<Address, Set<Address>>(), delegate: new Map<Address, Set<Address>>() };
  /** The holders of each indexed token account. */
  private readonly holders = new Map<Address, { owner: Address; delegate: Address | null }>();
  /**
   * Every account of the token programs (token accounts and mints) written since the start, as last
   * written: reads of them are answered without asking LiteSVM again, whose getAccount converts
   * addresses through base58 both ways (most of the cost of reading a 3,000-account wallet and its
   * mints). Safe because such an account changes only where a transaction or a direct write writes
   * it, and every write passes through update() before the next request is answered.
   */
  private readonly accounts = new Map<Address, TokenAccountSnapshot>();

  constructor(private readonly svm: LiteSVM) {}

  /** The token accounts (either program) whose owner, or delegate, is `holder`, as last written. */
  heldBy(role: 'owner' | 'delegate', holder: Address): { address: Address; account: TokenAccountSnapshot }[] {
    return [...(this.byHolder[role].get(holder) ?? [])].map((address) => ({ address, account: this.accounts.get(address)! }));
  }

  written(address: Address): TokenAccountSnapshot | undefined {
    return this.accounts.get(address);
  }

  /** Re-reads written accounts (an account only changes when written). */
  update(addresses: readonly string[]): void {
    for (const written of addresses) {
      const account = written as Address;
      const previous = this.holders.get(account);
      if (previous) {
        this.index('owner', previous.owner, account, false);
        if (previous.delegate) this.index('delegate', previous.delegate, account, false);
        this.holders.delete(account);
      }
      this.accounts.delete(account);
      const stored = this.svm.getAccount(account);
      if (!stored.exists || !isTokenProgram(stored.programAddress)) continue;
      const snapshot = { lamports: stored.lamports, data: new Uint8Array(stored.data), owner: stored.programAddress, executable: stored.executable };
      this.accounts.set(account, snapshot);
      const token = decodeTokenAccount(snapshot.data, snapshot.owner);
      if (!token) continue;
      this.holders.set(account, { owner: token.owner, delegate: token.delegate });
      this.index('owner', token.owner, account, true);
      if (token.delegate) this.index('delegate', token.delegate, account, true);
    }
  }

  private index(role: 'owner' | 'delegate', holder: Address, account: Address, add: boolean): void {
    const map = this.byHolder[role];
    const set = map.get(holder);
    if (add) map.set(holder, (set ?? new Set()).add(account));
    else if (set?.delete(account) && set.size === 0) map.delete(holder);
  }
}
