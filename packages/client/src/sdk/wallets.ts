/**
 * GET /api/generate_wallets, whole (generateWallets) or streamed line by line (streamWallets). A
 * streamed answer is read part by part, never whole, so that a million wallets take no more memory
 * than ten; a line is never quoted in an error: it may hold a key.
 */
import { clientError, invalidResponse, problemError, type CinderApiError } from './errors.ts';
import { isNonEmptyString, isObject } from './guards.ts';
import type { Transport } from './http.ts';
import type { CinderClient, GeneratedWallets, GenerateWalletsOptions, Keypair, WalletStreamLine } from './types.ts';

/** The query string of generate_wallets: n and the options given, as the route spells them. */
function walletsQuery(n: number, parameters: Omit<GenerateWalletsOptions, 'signal'>): URLSearchParams {
  if (!Number.isSafeInteger(n) || n < 1) throw clientError('INVALID_ARGUMENT', `n must be a positive integer, got ${String(n)}`);
  const query = new URLSearchParams({ n: String(n) });
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, String(value));
  return query;
}

/** The client's two wallet methods (see CinderClient for what each promises). */
export function walletMethods(transport: Transport): Pick<CinderClient, 'generateWallets' | 'streamWallets'> {
  const { send, request, baseUrl, timeoutMs } = transport;
  return {
    async generateWallets(n: number, walletOptions: GenerateWalletsOptions = {}): Promise<GeneratedWallets> {
      const { signal, ...parameters } = walletOptions;
      const query = walletsQuery(n, parameters);
      const { json } = await request({ method: 'GET', path: `api/generate_wallets?${query}`, retryable: true, signal });
      return normaliseWallets(json, n);
    },

    async *streamWallets(n: number, walletOptions: GenerateWalletsOptions = {}): AsyncGenerator<WalletStreamLine, void, undefined> {
      const { signal, ...parameters } = walletOptions;
      const query = walletsQuery(n, parameters);
      // Retried (429, 503) like any call, as long as nothing of the answer has arrived.
      const { response, timer } = await send({
        method: 'GET',
        path: `api/generate_wallets?${query}`,
        headers: { accept: 'application/x-ndjson, application/problem+json' },
        retryable: true,
        signal,
      });
      try {
        if (!/^application\/x-ndjson\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
          throw invalidResponse('Expected a streamed answer (application/x-ndjson) from GET /api/generate_wallets', response.status);
        }
        yield* readWalletLines(response.body, n, {
          restart: timer.restart,
          failure: (error, wallets) => {
            const progress = `after ${wallets} of ${n} wallets`;
            if (signal?.aborted) return clientError('ABORTED', `The stream was aborted ${progress}`, 0, error);
            if (timer.expired()) return clientError('TIMEOUT', `The stream sent nothing for ${timeoutMs} ms ${progress}`, 0, error);
            return clientError('NETWORK_ERROR', `The stream broke ${progress}: the connection to ${baseUrl} was cut`, 0, error);
          },
        });
      } finally {
        timer.stop();
      }
    },
  };
}

function normaliseWallets(body: unknown, n: number): GeneratedWallets {
  if (!isObject(body) || !Array.isArray(body.wallets) || !body.wallets.every(isNonEmptyString)) {
    throw invalidResponse('The wallet answer has no list of addresses (wallets)');
  }
  if (body.wallets.length !== n) throw invalidResponse(`Asked for ${n} wallets, received ${body.wallets.length}`);
  const wallets = body.wallets;
  let keypairs: Keypair[] = [];
  if (body.keypairs !== undefined) {
    const given = body.keypairs;
    if (!Array.isArray(given) || given.length !== n || !given.every((k, i) => isObject(k) && k.address === wallets[i] && isNonEmptyString(k.privateKey))) {
      throw invalidResponse('The wallet answer has keypairs that do not match its wallets');
    }
    keypairs = given as Keypair[];
  }
  return { ...(isNonEmptyString(body.mnemonic) ? { mnemonic: body.mnemonic } : {}), wallets, keypairs };
}

/**
 * The lines of a streamed wallets answer, read part by part. The server's `{ error }` line is
 * thrown as its problem; a stream that breaks, or ends before its n wallets (a cut that fell
 * between two lines), is `failure`'s error. A line is never quoted in an error: it may hold a key.
 */
async function* readWalletLines(
  body: ReadableStream<Uint8Array>,
  n: number,
  on: { restart(): void; failure(cause: unknown, wallets: number): CinderApiError },
): AsyncGenerator<WalletStreamLine, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  let wallets = 0;
  let done = false;
  try {
    while (!done) {
      let part: ReadableStreamReadResult<Uint8Array>;
      try {
        part = await reader.read();
      } catch (error) {
        throw on.failure(error, wallets);
      }
      on.restart();
      done = part.done;
      const lines = (rest + (part.done ? decoder.decode() : decoder.decode(part.value, { stream: true }))).split('\n');
      rest = lines.pop()!;
      for (const text of lines) {
        if (text === '') continue;
        const line = parseStreamLine(text);
        if ('address' in line) wallets++;
        yield line;
      }
    }
  } finally {
    if (!done) void reader.cancel().catch(() => {});
  }
  if (rest !== '' || wallets < n) throw on.failure(undefined, wallets);
}

function parseStreamLine(text: string): WalletStreamLine {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    throw invalidResponse('The wallets stream has a line that is not JSON');
  }
  if (!isObject(line)) throw invalidResponse('The wallets stream has a line that is not a JSON object');
  if (isObject(line.error)) {
    const { error } = line;
    throw problemError(error, typeof error.status === 'number' ? error.status : 0, 'The server ended the stream with an error');
  }
  if ('address' in line && !(isNonEmptyString(line.address) && isNonEmptyString(line.privateKey))) {
    throw invalidResponse('The wallets stream has a wallet without its address and key');
  }
  return line as WalletStreamLine;
}
