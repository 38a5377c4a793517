/**
 * The wallet's part of the README's keyless CLI example, for test/cli/readmeReclaim.test.ts: signs
 * every transaction of a prepared file (what `cinder … --unsigned` printed) in place with the key
 * of ~/.config/solana/id.json, as Phantom, a Ledger or the solana CLI would.
 * Usage: node --import tsx packages/client/test/cli/walletSign.ts FILE
 */
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { signPrepared } from '../sdk/reclaimFixture.ts';

const file = process.argv[2]!;
const owner = await createKeyPairSignerFromBytes(new Uint8Array(JSON.parse(await readFile(join(homedir(), '.config/solana/id.json'), 'utf8')) as number[]));
const prepared = JSON.parse(await readFile(file, 'utf8')) as { transactions: string[] };
await writeFile(file, JSON.stringify({ ...prepared, transactions: await signPrepared(prepared.transactions, owner) }));
