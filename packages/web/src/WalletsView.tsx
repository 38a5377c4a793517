/**
 * The second view: new wallets from GET /api/generate_wallets (count, recovery phrase: one for
 * all the wallets or one each, vanity prefix/suffix, solana-keygen format), shown once and offered
 * as downloads. The keys live in this view's state only: leaving the view or generating again
 * drops them. Each field carries the server's limit, and a refusal names the field by its label.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, type GenerateQuery, type Generated } from './api.ts';
import { inFormWords } from './problems.ts';
import { LIMITS } from './settings.ts';

/** The API's parameters by the labels of this form. */
const LABELS: Readonly<Record<string, string>> = {
  n: 'Number of wallets',
  mnemonic: 'Recovery phrase',
  hd: 'Recovery phrase',
  prefix: 'Address starts with',
  suffix: 'Address ends with',
  ignoreCase: 'Ignore letter case in the address pattern',
  format: 'Also in solana-keygen format',
};

/** '12' | '24': a phrase for each wallet (mnemonic=); 'hd12' | 'hd24': one phrase, every wallet derived from it (hd=). */
type Phrase = '' | '12' | '24' | 'hd12' | 'hd24';

function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The click has started the download; the URL is not needed after this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

const csvField = (value: string) => `"${value.replace(/"/g, '""')}"`;

function toCsv(generated: Generated): string {
  const withMnemonic = generated.keypairs.some((k) => k.mnemonic !== undefined);
  const withPath = generated.keypairs.some((k) => k.path !== undefined);
  const header = ['address', 'privateKey', ...(withMnemonic ? ['mnemonic'] : []), ...(withPath ? ['path'] : [])];
  const rows = generated.keypairs.map((k) =>
    [k.address, k.privateKey, ...(withMnemonic ? [k.mnemonic ?? ''] : []), ...(withPath ? [k.path ?? ''] : [])].map(csvField).join(','),
  );
  return `${header.join(',')}\n${rows.join('\n')}\n`;
}

/** One wallet: a solana-keygen id.json (64 numbers); several: an array of them. */
function toKeygen(generated: Generated): string {
  const arrays = generated.keypairs.map((k) => k.secretKeyBytes ?? []);
  return JSON.stringify(arrays.length === 1 ? arrays[0] : arrays);
}

export function WalletsView({ onUnauthorized }: { onUnauthorized: () => void }) {
  const [n, setN] = useState('1');
  const [phrase, setPhrase] = useState<Phrase>('');
  const [prefix, setPrefix] = useState('');
  const [suffix, setSuffix] = useState('');
  const [ignoreCase, setIgnoreCase] = useState(false);
  const [keygen, setKeygen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [generated, setGenerated] = useState<Generated | null>(null);

  const hd = phrase === 'hd12' || phrase === 'hd24';
  const maxWallets = phrase === '12' || phrase === '24' ? LIMITS.mnemonicWallets : LIMITS.wallets;

  async function generate() {
    setBusy(true);
    setError(null);
    setGenerated(null);
    const query: GenerateQuery = {
      n: n.trim(),
      ...(phrase === '12' || phrase === '24' ? { mnemonic: phrase } : {}),
      ...(phrase === 'hd12' || phrase === 'hd24' ? { hd: phrase === 'hd12' ? ('12' as const) : ('24' as const) } : {}),
      ...(prefix && !hd ? { prefix } : {}),
      ...(suffix && !hd ? { suffix } : {}),
      ...(ignoreCase && !hd && (prefix || suffix) ? { ignoreCase: 'true' as const } : {}),
      ...(keygen ? { format: 'keygen' as const } : {}),
    };
    try {
      setGenerated(await api.generate(query));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) onUnauthorized();
      setError(inFormWords(e, LABELS));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <section class="panel" aria-labelledby="generate-title">
        <h1 id="generate-title">Generate wallets</h1>
        <p>New Solana keypairs from the server’s secure random source, optionally with a recovery phrase or a vanity address.</p>
        <form
          class="generate"
          onSubmit={(event) => {
            event.preventDefault();
            void generate();
          }}
        >
          <label>
            Number of wallets
            <input type="number" inputMode="numeric" min={1} max={maxWallets} step={1} required value={n} onInput={(e) => setN(e.currentTarget.value)} />
            <span class="hint">1 to {maxWallets.toLocaleString('en-US')}</span>
          </label>
          <label>
            Recovery phrase
            <select value={phrase} onChange={(e) => setPhrase(e.currentTarget.value as Phrase)}>
              <option value="">None</option>
              <option value="hd12">One phrase for all the wallets, 12 words</option>
              <option value="hd24">One phrase for all the wallets, 24 words</option>
              <option value="12">A phrase for each wallet, 12 words</option>
              <option value="24">A phrase for each wallet, 24 words</option>
            </select>
          </label>
          {hd ? (
            <p class="hint wide" data-note="derivation">
              Wallet <i>i</i> is derived at <code>m/44'/501'/i'/0'</code>: Phantom, Solflare, Backpack, Trust Wallet and Exodus show these wallets for the phrase.
              Ledger Live derives <code>m/44'/501'/i'</code> and shows other wallets; <code>solana-keygen recover</code> gives another one still. Keep the phrase:
              it restores every wallet.
            </p>
          ) : null}
          <label>
            Address starts with
            <input
              type="text"
              autocomplete="off"
              spellcheck={false}
              maxLength={LIMITS.vanityLength}
              disabled={hd}
              value={prefix}
              onInput={(e) => setPrefix(e.currentTarget.value)}
            />
            <span class="hint">{hd ? 'Not with one phrase for all: derived addresses cannot be searched for' : `Up to ${LIMITS.vanityLength} characters with the end`}</span>
          </label>
          <label>
            Address ends with
            <input
              type="text"
              autocomplete="off"
              spellcheck={false}
              maxLength={LIMITS.vanityLength}
              disabled={hd}
              value={suffix}
              onInput={(e) => setSuffix(e.currentTarget.value)}
            />
          </label>
          <label class="check">
            <input type="checkbox" checked={ignoreCase} disabled={hd} onChange={(e) => setIgnoreCase(e.currentTarget.checked)} />
            Ignore letter case in the address pattern
          </label>
          <label class="check">
            <input type="checkbox" checked={keygen} onChange={(e) => setKeygen(e.currentTarget.checked)} />
            Also in solana-keygen format (id.json)
          </label>
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Generating…' : 'Generate'}
            </button>
          </div>
        </form>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
      </section>

      {generated ? (
        <section class="panel" aria-labelledby="generated-title">
          <h2 id="generated-title">Your new wallets</h2>
          <p class="warning" role="note">
            These keys are not kept anywhere: not by Cinder, and not by this page once you leave it or generate again. Anyone who has a private key or recovery
            phrase owns the wallet. Download them now and store them safely.
          </p>
          <div class="row">
            <button type="button" onClick={() => download('wallets.json', 'application/json', JSON.stringify(generated, null, 2))}>
              Download JSON
            </button>
            {keygen && generated.keypairs.every((k) => k.secretKeyBytes) ? (
              <button type="button" onClick={() => download(generated.keypairs.length === 1 ? 'id.json' : 'wallets-keygen.json', 'application/json', toKeygen(generated))}>
                Download keygen JSON
              </button>
            ) : null}
            <button type="button" onClick={() => download('wallets.csv', 'text/csv', toCsv(generated))}>
              Download CSV
            </button>
          </div>
          {generated.mnemonic ? (
            <div class="phrase" data-result="phrase">
              <p>
                <strong>The recovery phrase of all {generated.keypairs.length.toLocaleString('en-US')} wallets</strong> (each at the path shown with it):
              </p>
              <code class="secret">{generated.mnemonic}</code>
            </div>
          ) : null}
          <ol class="keys">
            {generated.keypairs.map((k) => (
              <li key={k.address}>
                <div>
                  <span class="muted">Address</span> <code data-address={k.address}>{k.address}</code>
                </div>
                <div>
                  <span class="muted">Private key</span> <code class="secret">{k.privateKey}</code>
                </div>
                {k.path ? (
                  <div>
                    <span class="muted">Path</span> <code data-path={k.path}>{k.path}</code>
                  </div>
                ) : null}
                {k.mnemonic ? (
                  <div>
                    <span class="muted">Recovery phrase</span> <code class="secret">{k.mnemonic}</code>
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
        </section>
      ) : null}
    </>
  );
}
