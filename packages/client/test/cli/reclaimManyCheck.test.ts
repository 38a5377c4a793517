/**
 * What `cinder reclaim --keys-file --fee-payer --destination` signs: a prepared transaction is checked
 * before any key of this machine signs it (src/commands/reclaimMany.ts checkTransaction). A
 * reclaim's transactions pass; a transfer from the fee payer, a close paying another address, a
 * burn of a mint not asked for, another fee payer or a signer outside the keys file are refused,
 * naming what is wrong. Transactions compiled here with @solana/kit and the programs' own clients.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getBurnCheckedInstruction, getCloseAccountInstruction } from '@solana-program/token';
import type { CommandContext } from '../../src/commands/context.ts';
import { checkTransaction } from '../../src/commands/reclaimMany.ts';

const ctx = { fail: (message: string) => new Error(message) } as unknown as CommandContext;

function messageOf(feePayer: Address, instructions: Instruction[]) {
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => compileTransaction(m).messageBytes,
  );
}

describe('cinder reclaim (many wallets): what is signed', () => {
  it('signs a reclaim, refuses anything else', async () => {
    const [feePayer, owner, stranger, destination, account, mint, otherMint] = await Promise.all(Array.from({ length: 7 }, () => generateKeyPairSigner()));
    const expected = { feePayer: feePayer!.address, destination: destination!.address, owners: new Set([owner!.address]), mints: new Set([mint!.address]) };
    const budget = getSetComputeUnitLimitInstruction({ units: 30_000 });
    const close = (to: Address, by = owner!) => getCloseAccountInstruction({ account: account!.address, destination: to, owner: by });
    const burn = (of: Address) => getBurnCheckedInstruction({ account: account!.address, mint: of, authority: owner!, amount: 1n, decimals: 0 });
    const check = (payer: Address, instructions: Instruction[]) => () => checkTransaction(ctx, 0, messageOf(payer, instructions), expected);

    assert.doesNotThrow(check(feePayer!.address, [budget, burn(mint!.address), close(destination!.address)]));
    const refused: [Address, Instruction[], RegExp][] = [
      [feePayer!.address, [budget, getTransferSolInstruction({ source: feePayer!, destination: stranger!.address, amount: 1n }), close(destination!.address)], /calls the program 11111111111111111111111111111111/],
      [feePayer!.address, [close(stranger!.address)], new RegExp(`closes an account to ${stranger!.address}, not to the destination`)],
      [feePayer!.address, [burn(otherMint!.address), close(destination!.address)], /burns a mint not given with --mints/],
      [stranger!.address, [close(destination!.address)], new RegExp(`its fee payer is ${stranger!.address}`)],
      [feePayer!.address, [close(destination!.address, stranger!)], new RegExp(`asks ${stranger!.address} to sign, which is not a wallet of the keys file`)],
    ];
    for (const [payer, instructions, why] of refused) assert.throws(check(payer, instructions), (error: Error) => /^prepared transaction 1 was not signed: /.test(error.message) && why.test(error.message));
  });

  it('reads the fee the fee payer would pay from the message: 5,000 lamports per signature and the priority fee its compute budget charges', async () => {
    const [feePayer, owner, destination, account] = await Promise.all(Array.from({ length: 4 }, () => generateKeyPairSigner()));
    const expected = { feePayer: feePayer!.address, destination: destination!.address, owners: new Set([owner!.address]), mints: new Set<string>() };
    const close = getCloseAccountInstruction({ account: account!.address, destination: destination!.address, owner: owner! });
    const check = (instructions: Instruction[]) => checkTransaction(ctx, 0, messageOf(feePayer!.address, instructions), expected);
    // 30,000 units at 1,000,001 µL: 30,000.03 lamports, charged rounded up as the runtime does.
    assert.deepEqual(check([getSetComputeUnitLimitInstruction({ units: 30_000 }), getSetComputeUnitPriceInstruction({ microLamports: 1_000_001n }), close]), {
      feeLamports: 2n * 5_000n + 30_001n,
      priorityFeeLamports: 30_001n,
    });
    assert.deepEqual(check([getSetComputeUnitLimitInstruction({ units: 30_000 }), close]), { feeLamports: 10_000n, priorityFeeLamports: 0n });
    // A price with the runtime's default limit would charge what the message does not say: refused.
    assert.throws(() => check([getSetComputeUnitPriceInstruction({ microLamports: 1n }), close]), /a compute-unit price without a compute-unit limit/);
  });
});
