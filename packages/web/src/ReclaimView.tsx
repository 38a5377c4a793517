/**
 * The main view: pick a wallet, see what each token account would return, reclaim the empty ones
 * (and burn the selected ones, after a confirmation that names them), follow each transaction.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { IdentifierString, WalletAccount } from '@wallet-standard/base';
import { api, ApiError, type AccountPreview, type Preview } from './api.ts';
import { formatUnits, plural, short, sol } from './format.ts';
import { reclaim, type Outcome, type Progress, type TxProgress } from './reclaim.ts';
import { connect, signAll, watchWallets, type SigningWallet } from './wallet.ts';
import type { Cluster } from './settings.ts';

const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** Why an account cannot be closed, for each code of the money rules. */
const SKIP_REASONS: Record<string, string> = {
  ACCOUNT_FROZEN: 'Frozen by the token’s issuer: it cannot be burned or closed until thawed.',
  CLOSE_AUTHORITY_NOT_OWNER: 'Another address holds the right to close this account.',
  CONFIDENTIAL_BALANCE_NOT_EMPTY: 'Holds a confidential balance, which must be withdrawn first.',
  MINT_PAUSED: 'The token is paused by its issuer: it cannot be burned now.',
  BURN_NOT_PERMITTED: 'This token can only be burned with its issuer’s signature.',
  MINT_NOT_FOUND: 'Its token no longer exists, and the account still holds tokens or withheld fees.',
};

const CHAIN_IDS: Record<Exclude<Cluster, null>, IdentifierString> = { 'mainnet-beta': 'solana:mainnet', devnet: 'solana:devnet', testnet: 'solana:testnet' };

function tokenLabel(account: AccountPreview): string {
  if (account.isNative) return 'Wrapped SOL';
  if (account.name && account.symbol) return `${account.name} (${account.symbol})`;
  return account.name ?? account.symbol ?? short(account.mint);
}

const balanceOf = (account: AccountPreview) => (account.decimals === null ? account.amount : formatUnits(account.amount, account.decimals));
const amountWithSymbol = (account: AccountPreview) => `${balanceOf(account)} ${account.symbol ?? tokenLabel(account)}`;

/** May this account's balance be burned from here: it holds tokens, nothing blocks it, and it is not an NFT. */
const burnable = (account: AccountPreview) =>
  account.amount !== '0' && !account.isNative && !account.looksLikeNft && (account.action === 'keep' || account.action === 'burn_and_close');

function whatHappens(account: AccountPreview): string {
  switch (account.action) {
    case 'close':
      return 'Closes';
    case 'unwrap':
      return 'Unwraps and closes';
    case 'burn_and_close':
      return `Burns ${amountWithSymbol(account)} and closes`;
    case 'skip':
      return `Cannot close: ${SKIP_REASONS[account.code ?? ''] ?? account.code}`;
    default:
      if (account.looksLikeNft) {
        return 'Kept: looks like an NFT. Burning it here would leave its metadata account, and the rent in it, behind, so Cinder leaves it alone.';
      }
      return 'Kept: holds tokens';
  }
}

/** What the wallet added to what it signed, in words: the relay accepted it (docs/wallet-additions.md). */
function walletAddedText(wallet: string, added: { safetyChecks: number; memo: boolean }): string {
  const parts = [...(added.safetyChecks > 0 ? [plural(added.safetyChecks, 'safety check')] : []), ...(added.memo ? ['a memo'] : [])];
  const them = added.safetyChecks > 0 ? 'them' : 'it';
  return `Your wallet (${wallet}) added ${parts.join(' and ')} to each transaction before signing. Cinder checked ${them} and accepted ${them}: ${added.safetyChecks > 0 ? 'safety checks only read balances and move no funds' : 'a memo only records a note'}.`;
}

function explorerLink(signature: string, cluster: Cluster) {
  if (!cluster) return null;
  const suffix = cluster === 'mainnet-beta' ? '' : `?cluster=${cluster}`;
  return (
    <a href={`https://explorer.solana.com/tx/${signature}${suffix}`} target="_blank" rel="noopener noreferrer">
      View on Solana Explorer
    </a>
  );
}

const TX_STATE: Record<TxProgress['state'], string> = {
  waiting: 'waiting for your approval',
  sending: 'sending',
  success: 'landed',
  failed: 'failed',
  pending: 'sent, not confirmed yet',
};

function TransactionList({ transactions, cluster }: { transactions: TxProgress[]; cluster: Cluster }) {
  return (
    <ol class="transactions">
      {transactions.map((t, i) => (
        <li key={i} class={`tx ${t.state}`} data-signature={t.signature ?? undefined}>
          <span>
            Transaction {i + 1} of {transactions.length}: {TX_STATE[t.state]}
            {t.error ? ` (${t.error})` : ''}
          </span>
          {t.signature ? (
            <span class="signature">
              <code title={t.signature}>{t.signature}</code> {explorerLink(t.signature, cluster)}
            </span>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

function ConfirmBurn({ accounts, onConfirm, onCancel }: { accounts: AccountPreview[]; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby="confirm-title" onCancel={onCancel}>
      <h2 id="confirm-title">Burn these tokens for good?</h2>
      <p>Burning destroys them; it cannot be undone. Their accounts are then closed and the rent comes back to you.</p>
      <ul>
        {accounts.map((a) => (
          <li key={a.address}>
            <strong>{amountWithSymbol(a)}</strong> {a.name && a.symbol ? `(${a.name})` : ''} <span class="muted">mint {short(a.mint)}</span>
          </li>
        ))}
      </ul>
      <div class="row end">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          Burn and reclaim
        </button>
      </div>
    </dialog>
  );
}

function WalletPicker({ onConnected }: { onConnected: (wallet: SigningWallet, account: WalletAccount) => void }) {
  const [wallets, setWallets] = useState<SigningWallet[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => watchWallets(setWallets), []);
  return (
    <section class="panel" aria-labelledby="pick-title">
      <h1 id="pick-title">Reclaim the rent of your empty token accounts</h1>
      <p>
        Every token account holds about 0.002 SOL of rent. Connect your wallet to see what closing its empty accounts returns; your wallet signs, Cinder never sees
        a private key.
      </p>
      {wallets.length === 0 ? (
        <p class="notice">No browser wallet found. Install or unlock a Solana wallet (Phantom, Solflare, Backpack, …) and reload this page.</p>
      ) : (
        <ul class="wallets">
          {wallets.map((wallet) => (
            <li key={wallet.name}>
              <button
                type="button"
                class="wallet"
                disabled={busy !== null}
                onClick={async () => {
                  setBusy(wallet.name);
                  setError(null);
                  try {
                    onConnected(wallet, await connect(wallet));
                  } catch (e) {
                    setError(`${wallet.name} did not connect${e instanceof Error && e.message ? `: ${e.message}` : ''}.`);
                  } finally {
                    setBusy(null);
                  }
                }}
              >
                <img src={wallet.icon} alt="" width={32} height={32} />
                <span>{busy === wallet.name ? `Connecting to ${wallet.name}…` : `Connect ${wallet.name}`}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}

export function ReclaimView({ cluster, onUnauthorized }: { cluster: Cluster; onUnauthorized: () => void }) {
  const [connected, setConnected] = useState<{ wallet: SigningWallet; account: WalletAccount } | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Bumped after each reclaim: the preview is read again.
  const [reloads, setReloads] = useState(0);
  // Each load bumps this: an answer that arrives after a newer request was made is dropped.
  const loads = useRef(0);

  const owner = connected?.account.address ?? null;
  const fail = (e: unknown) => {
    if (e instanceof ApiError && e.status === 401) onUnauthorized();
    setError(e instanceof Error ? e.message : String(e));
  };

  async function load(burn: ReadonlySet<string>) {
    if (!owner) return;
    const id = ++loads.current;
    setLoading(true);
    try {
      // signer "wallet": the preview packs as the prepare does, leaving room for what the wallet adds.
      const answer = await api.preview({ owner, metadata: 'true', signer: 'wallet', ...(burn.size > 0 ? { burn: [...burn].join(',') } : {}) });
      if (id === loads.current) setPreview(answer);
    } catch (e) {
      if (id === loads.current) fail(e);
    } finally {
      if (id === loads.current) setLoading(false);
    }
  }

  // Each preview counts against the server's rate limit: a few quick clicks on the burn boxes make one request.
  useEffect(() => {
    const timer = setTimeout(() => void load(selected), selected.size > 0 ? 400 : 0);
    return () => clearTimeout(timer);
  }, [owner, selected, reloads]);

  if (!connected) return <WalletPicker onConnected={(wallet, account) => setConnected({ wallet, account })} />;

  const busy = progress !== null;
  const summary = preview?.summary;
  const toBurn = preview?.accounts.filter((a) => selected.has(a.mint) && a.amount !== '0') ?? [];
  const reclaimable = summary ? BigInt(summary.reclaimLamports) + BigInt(summary.excessLamports) : 0n;
  const blocked = !summary || summary.problem !== null || summary.transactions === 0;

  async function run() {
    if (!connected || !owner || !summary) return;
    setConfirming(false);
    setError(null);
    setOutcome(null);
    try {
      const result = await reclaim(
        { owner, priorityFee: 0, burn: [...selected], feePayer: summary.sponsored ? 'sponsor' : 'owner', signer: 'wallet' },
        (transactions) => signAll(connected.wallet, connected.account, transactions, cluster ? CHAIN_IDS[cluster] : null),
        setProgress,
      );
      setOutcome(result);
      setSelected(new Set());
    } catch (e) {
      fail(e);
    } finally {
      setProgress(null);
      setReloads((n) => n + 1);
    }
  }

  const toggle = (mint: string) => {
    const next = new Set(selected);
    if (next.has(mint)) next.delete(mint);
    else next.add(mint);
    setSelected(next);
  };

  const mainLabel =
    toBurn.length > 0 ? `Burn ${plural(new Set(toBurn.map((a) => a.mint)).size, 'token')} and reclaim ${sol(reclaimable)}` : `Reclaim ${sol(reclaimable)}`;

  return (
    <>
      <section class="panel" aria-labelledby="wallet-title">
        <div class="row spread">
          <h1 id="wallet-title">
            <img src={connected.wallet.icon} alt="" width={24} height={24} /> {connected.wallet.name}: <code title={owner!}>{short(owner!)}</code>
          </h1>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              setConnected(null);
              setPreview(null);
              setOutcome(null);
              setError(null);
              setSelected(new Set());
            }}
          >
            Use another wallet
          </button>
        </div>
        {summary ? (
          <dl class="totals" aria-busy={loading}>
            <div>
              <dt>Reclaimable now</dt>
              <dd data-total="reclaim">{sol(reclaimable)}</dd>
            </div>
            <div>
              <dt>Network fees</dt>
              <dd data-total="fee">{sol(summary.feeLamports)}</dd>
            </div>
            <div>
              <dt>You receive</dt>
              <dd data-total="net">{sol(summary.netLamports)}</dd>
            </div>
          </dl>
        ) : (
          <p role="status">{loading ? 'Reading your token accounts…' : ''}</p>
        )}
        {summary?.sponsored ? (
          <p class="notice" data-note="sponsored">
            Your wallet holds no SOL for fees, so Cinder’s fee sponsor pays them and is repaid from the reclaimed rent in the same transactions. You still sign
            every transaction.
          </p>
        ) : null}
        {/* After a reclaim its result says what happened: a "nothing to reclaim" read after it is no warning. */}
        {summary?.problem && !(outcome && summary.problem.code === 'NOTHING_TO_RECLAIM') ? (
          <p class="notice" data-note="problem">
            {summary.problem.code !== 'NOTHING_TO_RECLAIM'
              ? summary.problem.detail
              : preview?.accounts.some(burnable)
                ? 'Nothing to reclaim now: this wallet has no empty token account. To close accounts that hold tokens, select them below to burn.'
                : 'Nothing to reclaim now: this wallet has no empty token account.'}
          </p>
        ) : null}
        <div class="row">
          <button type="button" class="primary big" disabled={blocked || busy || loading} onClick={() => (toBurn.length > 0 ? setConfirming(true) : void run())}>
            {mainLabel}
          </button>
          {summary && summary.transactions > 1 ? <span class="muted">{plural(summary.transactions, 'transaction')}, approved at once</span> : null}
        </div>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        {progress ? (
          <div class="progress" role="status">
            {progress.note ? <p class="notice">{progress.note}</p> : null}
            <p>
              {progress.stage === 'preparing'
                ? 'Preparing the transactions…'
                : progress.stage === 'signing'
                  ? `Approve ${plural(progress.transactions.filter((t) => t.state === 'waiting').length, 'transaction')} in ${connected.wallet.name}.`
                  : 'Sending…'}
              {progress.sponsored ? ' The fee sponsor pays the network fees and is repaid from the reclaimed rent.' : ''}
            </p>
            <TransactionList transactions={progress.transactions} cluster={cluster} />
          </div>
        ) : null}
        {outcome ? (
          <div class="result" role="status">
            <h2>{outcome.allLanded ? 'Done' : 'Not everything landed'}</h2>
            {outcome.closedAccounts !== null && outcome.netLamports !== null ? (
              <p data-result="summary">
                Closed {plural(outcome.closedAccounts, 'account')}; you received <strong>{sol(outcome.netLamports)}</strong> after fees
                {outcome.sponsored ? ' (the fee sponsor was repaid)' : ''}.
              </p>
            ) : (
              <p>Some transactions did not land; the table below shows what is left.</p>
            )}
            {outcome.walletAdded.safetyChecks > 0 || outcome.walletAdded.memo ? (
              <p class="muted" data-result="wallet-added">
                {walletAddedText(connected.wallet.name, outcome.walletAdded)}
                {outcome.feeLamports !== null ? ` Network fees as signed: ${sol(outcome.feeLamports)}.` : ''}
              </p>
            ) : null}
            <TransactionList transactions={outcome.transactions} cluster={cluster} />
          </div>
        ) : null}
      </section>

      {preview ? (
        <section class="panel" aria-labelledby="accounts-title">
          <h2 id="accounts-title">Token accounts ({preview.accounts.length})</h2>
          {preview.accounts.length === 0 ? (
            <p>This wallet has no token accounts.</p>
          ) : (
            <table class="accounts">
              <thead>
                <tr>
                  <th scope="col">Token</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Program</th>
                  <th scope="col">Closing returns</th>
                  <th scope="col">What happens</th>
                </tr>
              </thead>
              <tbody>
                {preview.accounts.map((a) => (
                  <tr key={a.address} data-account={a.address} class={a.action}>
                    <td data-label="Token">
                      <span title={a.mint}>{tokenLabel(a)}</span>
                      {/* The mint beside every name: a name is the issuer's to choose, the mint is not. */}
                      {a.isNative || a.name || a.symbol ? (
                        <>
                          {' '}
                          <span class="muted mint" title={a.mint}>
                            mint {short(a.mint)}
                          </span>
                        </>
                      ) : null}
                    </td>
                    <td data-label="Balance" data-amount={a.amount}>
                      {balanceOf(a)}
                    </td>
                    <td data-label="Program">{a.tokenProgram === TOKEN_2022 ? 'Token-2022' : 'Token'}</td>
                    <td data-label="Closing returns" data-lamports={a.lamports}>
                      {sol(a.lamports)}
                    </td>
                    <td data-label="What happens">
                      <div class="what">
                        {whatHappens(a)}
                        {burnable(a) ? (
                          <label class="burn">
                            <input type="checkbox" checked={selected.has(a.mint)} disabled={busy} onChange={() => toggle(a.mint)} />
                            Burn {amountWithSymbol(a)}
                          </label>
                        ) : null}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ) : null}
      {confirming ? <ConfirmBurn accounts={toBurn} onConfirm={() => void run()} onCancel={() => setConfirming(false)} /> : null}
    </>
  );
}
