/**
 * The app's type and its dependencies, in a module of their own so that routes and plugins can
 * name them without importing app.ts (which imports them: imports point one way).
 */
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { ChainAdapter } from '../chain/types.ts';
import type { Config } from '../config.ts';
import type { Sponsor } from '../keys/sponsor.ts';
import type { WalletGenerator } from '../wallets/index.ts';

export type CinderApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AppDeps {
  config: Config;
  logger: Logger;
  chain: ChainAdapter;
  wallets: WalletGenerator;
  /** The fee sponsor (SPONSOR_KEYPAIR), or none. */
  sponsor?: Sponsor | null;
}
