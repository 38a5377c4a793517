/**
 * The web app at `/` (the @cinder/web package, packages/web: built into its committed bundle by `npm run build:web`):
 * the page and its four files, each read on its first visit (not at start: the service's start does
 * not wait for files nobody may ask for) and served from memory from then on, with a strict
 * Content-Security-Policy (no inline script, nothing from another origin: the page works offline
 * against the embedded chain), nosniff and no referrer. The server tells the page two things in
 * <meta> tags: whether it must ask for an API key, the public cluster (for explorer links),
 * known by the RPC node's genesis hash, and the limits its forms carry.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WEB_APP_BUNDLE } from '@cinder/web';
import type { AppDeps, CinderApp } from '../types.ts';
import type { Config } from '../../config.ts';

export const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Wallet icons are data: URIs (Wallet Standard).
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const HEADERS = {
  'content-security-policy': WEB_APP_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  // Revalidated on every load (ETag): a new version of Cinder is picked up at once.
  'cache-control': 'no-cache',
} as const;

const ASSETS = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
} as const;

/** The genesis hashes of the public clusters: what an RPC node is connected to, whatever its URL. */
const PUBLIC_CLUSTERS: Readonly<Record<string, 'mainnet-beta' | 'devnet' | 'testnet'>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': 'mainnet-beta',
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: 'devnet',
  '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY': 'testnet',
};

/** The public cluster of a genesis hash; null for the embedded chain or any other cluster (no explorer links). */
export function clusterOf(genesisHash: string | null): 'mainnet-beta' | 'devnet' | 'testnet' | null {
  return (genesisHash !== null && Object.hasOwn(PUBLIC_CLUSTERS, genesisHash) ? PUBLIC_CLUSTERS[genesisHash] : null) ?? null;
}

/** The limits the page's forms carry (a field's max), as `name=value` pairs: the page never offers what the server refuses. */
function formLimits(config: Pick<Config, 'maxWalletsPerRequest' | 'maxMnemonicWalletsPerRequest' | 'maxVanityLength'>): string {
  return `wallets=${config.maxWalletsPerRequest} mnemonic=${config.maxMnemonicWalletsPerRequest} vanity=${config.maxVanityLength}`;
}

function renderPage(template: string, config: Pick<Config, 'apiKeys' | 'maxWalletsPerRequest' | 'maxMnemonicWalletsPerRequest' | 'maxVanityLength'>, cluster: string | null): string {
  return template
    .replace('{{API_KEY}}', config.apiKeys.length > 0 ? 'required' : 'none')
    .replace('{{CLUSTER}}', cluster ?? '')
    .replace('{{LIMITS}}', formLimits(config));
}

/** A file served from memory, with its ETag (the web app's and the guide's). */
export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export const staticFile = (body: Buffer, type: string): StaticFile => ({ body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });

/** Sends a file with the web app's headers (its strict Content-Security-Policy among them), or 304. */
export function sendFile(request: FastifyRequest, reply: FastifyReply, { body, type, etag }: StaticFile) {
  reply.headers(HEADERS).header('etag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type(type).send(body);
}

export function registerWebApp(app: CinderApp, { config, chain }: Pick<AppDeps, 'config' | 'chain'>): void {
  let template: string | undefined;
  const pageFor = (cluster: string | null) => {
    template ??= readFileSync(new URL('index.html', WEB_APP_BUNDLE), 'utf8');
    return staticFile(Buffer.from(renderPage(template, config, cluster)), 'text/html; charset=utf-8');
  };
  // The cluster comes from the RPC node's genesis hash (read once, cached by the adapter); while the
  // node cannot be reached the page is served without explorer links.
  let known: StaticFile | undefined;
  let unknownCluster: StaticFile | undefined;
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (!known) {
      const genesisHash = await chain.getGenesisHash(Date.now() + 2000).catch(() => null);
      if (genesisHash !== null) known = pageFor(clusterOf(genesisHash));
    }
    return sendFile(request, reply, known ?? (unknownCluster ??= pageFor(null)));
  });
  for (const [name, type] of Object.entries(ASSETS)) {
    let asset: StaticFile | undefined;
    app.get(`/app/${name}`, { schema: { hide: true } }, (request, reply) => sendFile(request, reply, (asset ??= staticFile(readFileSync(new URL(name, WEB_APP_BUNDLE)), type))));
  }
}
