import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airdropFactory, lamports } from '@solana/kit';
import type { Config } from '@cinder/service';
import { loadSponsor, type Sponsor } from '@cinder/service';
import { createTestApp, type TestApp } from './app.ts';
import { createTestKey } from './keys.ts';

export interface SponsoredTestApp {
  t: TestApp;
  sponsor: Sponsor;
  /** Closes the app and removes the sponsor's key file. */
  close(): Promise<void>;
}

/**
 * The real app with a fee sponsor loaded as SPONSOR_KEYPAIR loads it (a solana-keygen file, here in
 * a temporary directory), funded with `funding` lamports by airdrop on the app's chain.
 */
export async function createSponsoredTestApp(
  funding: bigint,
  overrides: Partial<Config> = {},
  /** What createTestApp takes besides the sponsor: programs, a chain of the caller's, an RPC path through a proxy. */
  options: Omit<NonNullable<Parameters<typeof createTestApp>[1]>, 'sponsor'> = {},
): Promise<SponsoredTestApp> {
  const keyDir = await mkdtemp(join(tmpdir(), 'cinder-sponsor-'));
  const key = await createTestKey();
  const path = join(keyDir, 'sponsor.json');
  await writeFile(path, key.keygenJson, { mode: 0o600 });
  const sponsor = await loadSponsor(path);
  const t = await createTestApp(overrides, { sponsor, ...options });
  if (funding > 0n) {
    await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({
      recipientAddress: sponsor.signer.address,
      lamports: lamports(funding),
      commitment: 'confirmed',
    });
  }
  return {
    t,
    sponsor,
    async close() {
      await t.close();
      await rm(keyDir, { recursive: true, force: true });
    },
  };
}
