/**
 * The page's only way out: Cinder's own HTTP API, same origin. Request and answer types are the
 * service's route schemas (TypeBox `Static`, gathered in src/api.ts), imported as types only: the
 * page cannot drift from what the server validates and answers.
 */
import type {
  GenerateWalletsQuery,
  GenerateWalletsResponse,
  PrepareReclaimRequest,
  PrepareResponse,
  ReclaimPreviewAccount,
  ReclaimPreviewQuery,
  ReclaimPreviewResponse,
  RelayRequest as RelayRequestBody,
  RelayResponse,
  TransactionStatusesRequest,
  TransactionStatusesResponse,
} from '@cinder/service';
import { cleanName } from './format.ts';

export type Preview = ReclaimPreviewResponse;
export type AccountPreview = ReclaimPreviewAccount;
export type PreviewQuery = ReclaimPreviewQuery;
export type PrepareRequest = PrepareReclaimRequest;
export type Prepared = PrepareResponse;
export type RelayRequest = RelayRequestBody;
export type Relayed = RelayResponse;
export type StatusesRequest = TransactionStatusesRequest;
export type Statuses = TransactionStatusesResponse;
export type GenerateQuery = GenerateWalletsQuery;
export type Generated = GenerateWalletsResponse;

/** An answer that was not 2xx: the problem's `detail` is what the person reads. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    /** Retry-After of a 429 or 503, in seconds. */
    readonly retryAfterSeconds: number | null = null,
    /** The problem's per-field list (`errors`): which field of the request broke which rule. */
    readonly fields: readonly { field: string; message: string }[] = [],
  ) {
    super(detail);
  }
}

const API_KEY_STORAGE = 'cinder-api-key';

/** The API key lives in this tab only (sessionStorage): closing the tab forgets it. */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(API_KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(API_KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(API_KEY_STORAGE),
};

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const key = apiKey.get();
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'Cinder could not be reached. Check the connection and try again.');
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: handled below
  }
  if (!response.ok) {
    const problem = (json ?? {}) as { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown };
    const detail = typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : `The server answered ${response.status}.`;
    const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
    const fields = Array.isArray(problem.errors)
      ? problem.errors.filter((e): e is { field: string; message: string } => typeof e?.field === 'string' && typeof e?.message === 'string')
      : [];
    throw new ApiError(response.status, typeof problem.code === 'string' ? problem.code : 'HTTP_ERROR', detail, Number.isFinite(retryAfter) ? retryAfter : null, fields);
  }
  return json as T;
}

function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, value);
  return search.toString();
}

export const api = {
  // Names cleaned once, where they enter the page (format.ts: cleanName).
  preview: async (q: PreviewQuery) => {
    const preview = await call<Preview>('GET', `/api/reclaim_rent?${query(q)}`);
    return { ...preview, accounts: preview.accounts.map((a) => ({ ...a, name: cleanName(a.name), symbol: cleanName(a.symbol) })) };
  },
  prepare: (body: PrepareRequest) => call<Prepared>('POST', '/api/reclaim_rent/prepare', body),
  relay: (body: RelayRequest) => call<Relayed>('POST', '/api/transactions', body),
  /** Many signatures at once; with waitMs the server answers as soon as one of them settles. */
  statuses: (body: StatusesRequest) => call<Statuses>('POST', '/api/transactions/statuses', body),
  generate: (q: GenerateQuery) => call<Generated>('GET', `/api/generate_wallets?${query({ ...q })}`),
};

/** Wire bytes ↔ base64 (the API's form of a transaction). */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
