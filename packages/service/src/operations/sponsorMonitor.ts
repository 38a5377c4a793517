/**
 * The fee sponsor's balance as a metric (cinder_sponsor_balance_lamports): refreshed on a timer,
 * and whenever any operation reads the sponsor's account anyway (the pipeline reads it to decide
 * whether the sponsor can pay), so the gauge follows real use at no extra RPC cost.
 */
import type { Address } from '@solana/kit';
import type { Logger } from 'pino';
import type { ChainAdapter } from '../chain/types.ts';
import type { Sponsor } from '../keys/sponsor.ts';
import type { Metrics } from '../metrics.ts';

export interface SponsorMonitor {
  /** The chain adapter to use from now on: the same, with reads of the sponsor's account observed. */
  chain: ChainAdapter;
  /** Reads the balance now (and sets the gauge). */
  refresh(): Promise<bigint>;
  stop(): void;
}

export function monitorSponsorBalance(options: {
  chain: ChainAdapter;
  sponsor: Sponsor;
  metrics: Metrics;
  logger: Logger;
  intervalMs?: number;
}): SponsorMonitor {
  const { sponsor, metrics, logger } = options;
  const address: Address = sponsor.signer.address;
  metrics.registry.registerMetric(metrics.sponsorLamports);
  // A Number is exact up to 9,007,199 SOL: more than any fee sponsor holds.
  const observe = (lamports: bigint) => metrics.sponsorLamports.set(Number(lamports));

  const chain = new Proxy(options.chain, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'getAccounts') {
        return async (...args: Parameters<ChainAdapter['getAccounts']>) => {
          const accounts = await target.getAccounts(...args);
          const index = args[0].indexOf(address);
          if (index >= 0) observe(accounts[index]?.lamports ?? 0n);
          return accounts;
        };
      }
      if (property === 'getBalance') {
        return async (...args: Parameters<ChainAdapter['getBalance']>) => {
          const lamports = await target.getBalance(...args);
          if (args[0] === address) observe(lamports);
          return lamports;
        };
      }
      return value;
    },
  });

  const refresh = () => chain.getBalance(address, Date.now() + 10_000);
  const tick = () =>
    void refresh().catch((error: unknown) => logger.warn({ err: error, sponsor: address }, 'could not read the fee sponsor\'s balance'));
  tick();
  const timer = setInterval(tick, options.intervalMs ?? 30_000);
  timer.unref();
  return { chain, refresh, stop: () => clearInterval(timer) };
}
