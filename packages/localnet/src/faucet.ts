/**
 * requestAirdrop as a test validator's faucet answers it: a System transfer from the faucet's
 * keypair, signed with a recent blockhash and sent without preflight. The answer is its signature;
 * the transfer then lands like any transaction (with validator timing, a moment after the answer), and can
 * fail on chain, e.g. 1 lamport to a new account (InsufficientFundsForRent).
 *
 * LiteSVM's own `airdrop` executes at once and keeps its keypair to itself, so it can neither wait
 * as a sent transaction does nor appear in getTransaction; the faucet here takes over its lamports instead.
 */
import {
  address,
  appendTransactionMessageInstruction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  AccountRole,
  type Address,
  type Blockhash,
  type KeyPairSigner,
} from '@solana/kit';
import type { Chain } from './chain.ts';
import { SYSTEM_PROGRAM } from './parsedInstructions.ts';
import { submitTransaction } from './transactions.ts';
import { decodeTransactionText } from './wire.ts';

const TRANSFER = 2;

export class Faucet {
  /** Signatures this faucet sent, with the slot they were sent in: a repeat needs a new blockhash. */
  private readonly sent = new Map<string, number>();

  private constructor(
    private readonly chain: Chain,
    readonly signer: KeyPairSigner,
  ) {}

  /** Moves LiteSVM's airdrop account's lamports (the richest account at genesis) to a new keypair. */
  static async create(chain: Chain): Promise<Faucet> {
    const signer = await generateKeyPairSigner();
    const [builtin] = chain.largestAccounts(1);
    if (!builtin) throw new Error('LiteSVM has no airdrop account');
    chain.setAccount({ address: builtin.address, lamports: 0n, data: new Uint8Array(), owner: address(SYSTEM_PROGRAM), executable: false });
    chain.setAccount({ address: signer.address, lamports: builtin.lamports, data: new Uint8Array(), owner: address(SYSTEM_PROGRAM), executable: false });
    return new Faucet(chain, signer);
  }

  get address(): Address {
    return this.signer.address;
  }

  async airdrop(recipient: Address, lamports: bigint): Promise<string> {
    let wire = await this.sign(recipient, lamports);
    // Two identical requests within one blockhash would be one transaction; as clients expect two
    // airdrops, the second moves to a fresh blockhash. No await between this check and `sent`.
    while (this.sent.has(wire.signature) || this.chain.records.get(wire.signature)) {
      this.chain.refreshBlockhash();
      wire = await this.sign(recipient, lamports);
    }
    for (const [signature, slot] of this.sent) {
      if (slot >= this.chain.slot - 150) break;
      this.sent.delete(signature);
    }
    this.sent.set(wire.signature, this.chain.slot);
    submitTransaction(this.chain, wire, { skipPreflight: true });
    return wire.signature;
  }

  private async sign(recipient: Address, lamports: bigint) {
    const data = new Uint8Array(12);
    const view = new DataView(data.buffer);
    view.setUint32(0, TRANSFER, true);
    view.setBigUint64(4, lamports, true);
    const { blockhash, lastValidBlockHeight } = this.chain.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(this.signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) }, m),
      (m) =>
        appendTransactionMessageInstruction(
          {
            programAddress: address(SYSTEM_PROGRAM),
            accounts: [
              { address: this.signer.address, role: AccountRole.WRITABLE_SIGNER },
              { address: recipient, role: AccountRole.WRITABLE },
            ],
            data,
          },
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return decodeTransactionText(getBase64EncodedWireTransaction(signed), 'base64');
  }
}
