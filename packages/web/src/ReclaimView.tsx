/**
 * The main view: a connected wallet's accounts (or any address's, read-only), grouped, what a
 * reclaim returns, the burn choices and their confirmation, the sending and its result.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { IdentifierString, WalletAccount } from '@wallet-standard/base';
import { api, ApiError, type AccountPreview, type Preview } from './api.ts';
import { burnable, groupAccounts, solToSend } from './accounts.ts';
import { AccountGroups, ConfirmBurn } from './AccountGroups.tsx';
import { plural, short, sol } from './format.ts';
import { inFormWords } from './problems.ts';
import { reclaim, type Outcome, type Progress } from './reclaim.ts';
import { retryingLimits } from './retry.ts';
import { Result, RetryNotice, SendProgress } from './SendProgress.tsx';
import { signAll, transactionVersionsOf, type SigningWallet } from './wallet.ts';
import { WalletPicker } from './WalletPicker.tsx';
import type { Cluster } from './settings.ts';

const CHAIN_IDS: Record<Exclude<Cluster, null>, IdentifierString> = { 'mainnet-beta': 'solana:mainnet', devnet: 'solana:devnet', testnet: 'solana:testnet' };

/** A connected wallet (it can sign), or an address looked at read-only. */
type Target = { wallet: SigningWallet; account: WalletAccount; address: string } | { wallet: null; address: string };

function ProblemNote({ preview, outcome, readOnly }: { preview: Preview; outcome: Outcome | null; readOnly: boolean }) {
  const { problem } = preview.summary;
  if (!problem) return null;
  // After a reclaim its result says what happened: a "nothing to reclaim" read after it is no warning.
  if (outcome && problem.code === 'NOTHING_TO_RECLAIM') return null;
  if (problem.code === 'INSUFFICIENT_SOL_FOR_FEE') {
    return (
      <p class="notice" data-note="fund">
        {readOnly ? 'This wallet' : 'Your wallet'} holds too little SOL to pay the network fees, and this Cinder server has no fee sponsor. Send about{' '}
        <strong>{solToSend(problem.detail, BigInt(preview.summary.feeLamports))} SOL</strong> to this wallet to pay its fees, or ask the operator to turn on the fee
        sponsor. Then the empty accounts below close and their rent comes back.
      </p>
    );
  }
  if (problem.code === 'NOTHING_TO_RECLAIM') {
    return (
      <p class="notice" data-note="problem">
        {preview.accounts.some(burnable)
          ? 'Nothing to reclaim now: this wallet has no empty token account. To close accounts that hold tokens, choose them below to burn.'
          : 'Nothing to reclaim now: this wallet has no empty token account.'}
      </p>
    );
  }
  return (
    <p class="notice" data-note="problem">
      {problem.detail}
    </p>
  );
}

export function ReclaimView({ cluster, onUnauthorized }: { cluster: Cluster; onUnauthorized: () => void }) {
  const [target, setTarget] = useState<Target | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [previewRetry, setPreviewRetry] = useState<number | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  // Where the error came from: a preview that succeeds clears its own kind only, so the reason a
  // reclaim failed stays on the page after the preview is read again (as it is after every reclaim).
  const [failure, setFailure] = useState<{ text: string; from: 'preview' | 'reclaim' } | null>(null);
  const error = failure?.text ?? null;
  // Bumped after each reclaim: the preview is read again.
  const [reloads, setReloads] = useState(0);
  // Each load bumps this: an answer that arrives after a newer request was made is dropped.
  const loads = useRef(0);
  // The names of what the last preview showed, kept for the result of a burn (the accounts are gone after it).
  const known = useRef(new Map<string, AccountPreview>());

  const owner = target?.address ?? null;
  const readOnly = target !== null && target.wallet === null;
  const fail = (e: unknown, from: 'preview' | 'reclaim') => {
    if (e instanceof ApiError && e.status === 401) onUnauthorized();
    setFailure({ text: inFormWords(e, { owner: 'Wallet address' }), from });
  };

  async function load(burn: ReadonlySet<string>) {
    if (!owner) return;
    const id = ++loads.current;
    setLoading(true);
    try {
      // signer "wallet": the preview packs as the prepare does, leaving room for what the wallet adds.
      // The wallet's own versions too: the preview packs v1 exactly where the prepare will.
      const versions = target?.wallet ? transactionVersionsOf(target.wallet) : undefined;
      // priorityFee "auto": a fee the cluster's recent fees say lands; the preview states the number it resolved to.
      const query = {
        owner,
        metadata: 'true' as const,
        signer: 'wallet' as const,
        priorityFee: 'auto',
        ...(burn.size > 0 ? { burn: [...burn].join(',') } : {}),
        ...(versions ? { transactionVersions: versions.join(',') } : {}),
      };
      const answer = await retryingLimits(
        () => api.preview(query),
        (left) => id === loads.current && setPreviewRetry(left),
      );
      if (id === loads.current) {
        for (const a of answer.accounts) known.current.set(a.mint, a);
        setPreview(answer);
        setFailure((f) => (f?.from === 'preview' ? null : f));
      }
    } catch (e) {
      if (id === loads.current) fail(e, 'preview');
    } finally {
      if (id === loads.current) {
        setLoading(false);
        setPreviewRetry(null);
      }
    }
  }

  // Each preview counts against the server's rate limit: a few quick clicks on the burn boxes make one request.
  useEffect(() => {
    const timer = setTimeout(() => void load(selected), selected.size > 0 ? 400 : 0);
    return () => clearTimeout(timer);
  }, [owner, selected, reloads]);

  const leave = () => {
    loads.current++;
    setTarget(null);
    setPreview(null);
    setOutcome(null);
    setFailure(null);
    setSelected(new Set());
  };

  if (!target) {
    return (
      <WalletPicker
        onConnected={(wallet, account) => setTarget({ wallet, account, address: account.address })}
        onWatch={(address) => setTarget({ wallet: null, address })}
      />
    );
  }

  const busy = progress !== null;
  const summary = preview?.summary;
  // What the preview with the chosen burns says will be burned (a chosen token the preview found blocked is not).
  const toBurn = preview?.accounts.filter((a) => selected.has(a.mint) && a.action === 'burn_and_close') ?? [];
  const reclaimable = summary ? BigInt(summary.reclaimLamports) + BigInt(summary.excessLamports) : 0n;
  const blocked = !summary || summary.problem !== null || summary.transactions === 0;
  const canReclaim = !!summary && summary.problem?.code !== 'INSUFFICIENT_SOL_FOR_FEE';
  const groups = preview ? groupAccounts(preview.accounts) : [];
  // Where the fees cannot be paid the plan closes nothing: the rent shown is what the empty accounts hold.
  const rentShown = canReclaim ? reclaimable : (groups.find((g) => g.name === 'close')?.lamports ?? 0n);
  // After a reclaim that left nothing to close (and no burn chosen since), its result says what
  // happened: totals of 0 SOL and a disabled button above it would say the opposite.
  const finished = outcome !== null && !!summary && summary.transactions === 0 && selected.size === 0;

  async function run() {
    if (!target?.wallet || !owner || !summary) return;
    const { wallet, account } = target;
    const versions = transactionVersionsOf(wallet);
    setConfirming(false);
    setFailure(null);
    setOutcome(null);
    try {
      const result = await reclaim(
        // The number the preview's "auto" resolved to: the prepare then plans the fee and the net the page shows.
        {
          owner,
          priorityFee: summary.priorityFee,
          burn: [...selected],
          feePayer: summary.sponsored ? 'sponsor' : 'owner',
          signer: 'wallet',
          ...(versions ? { transactionVersions: versions } : {}),
        },
        (transactions) => signAll(wallet, account, transactions, cluster ? CHAIN_IDS[cluster] : null),
        setProgress,
      );
      setOutcome(result);
      setSelected(new Set());
    } catch (e) {
      fail(e, 'reclaim');
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

  // One amount on the button: what the person receives (the rent back, less the network fees).
  const receives = summary && !blocked ? ` ${sol(summary.netLamports)}` : '';
  const burnMints = new Set(toBurn.map((a) => a.mint)).size;
  const mainLabel = burnMints > 0 ? `Burn ${plural(burnMints, 'token')} and reclaim${receives}` : `Reclaim${receives}`;

  return (
    <>
      <section class="panel" aria-labelledby="wallet-title">
        <div class="row spread">
          <h1 id="wallet-title">
            {target.wallet ? (
              <>
                <img src={target.wallet.icon} alt="" width={24} height={24} /> {target.wallet.name}:
              </>
            ) : (
              'Read-only:'
            )}{' '}
            <code title={owner!}>{short(owner!)}</code>
          </h1>
          <button type="button" disabled={busy} onClick={leave}>
            {readOnly ? 'Look at another wallet' : 'Use another wallet'}
          </button>
        </div>
        {readOnly ? (
          <p class="notice" data-note="read-only">
            You are looking at <code>{owner}</code> without its wallet: this is what a reclaim would do. Only its owner can do it, by connecting the wallet.
          </p>
        ) : null}
        {finished ? null : summary ? (
          <dl class="totals" aria-busy={loading}>
            <div>
              <dt>Rent in the accounts that close</dt>
              <dd data-total="reclaim">{sol(rentShown)}</dd>
            </div>
            <div>
              <dt>Network fees</dt>
              <dd data-total="fee">{canReclaim ? sol(summary.feeLamports) : 'paid once the wallet holds SOL'}</dd>
            </div>
            <div>
              <dt>{readOnly ? 'The owner receives' : 'You receive'}</dt>
              <dd data-total="net">{canReclaim ? sol(summary.netLamports) : '0 SOL until the fees can be paid'}</dd>
            </div>
          </dl>
        ) : (
          <p role="status">{loading ? 'Reading the token accounts…' : ''}</p>
        )}
        <RetryNotice seconds={previewRetry} />
        {summary?.sponsored && !readOnly ? (
          <p class="notice" data-note="sponsored">
            Your wallet holds no SOL for fees, so Cinder’s fee sponsor pays them and is repaid from the reclaimed rent in the same transactions. You still sign
            every transaction.
          </p>
        ) : null}
        {preview ? <ProblemNote preview={preview} outcome={outcome} readOnly={readOnly} /> : null}
        {readOnly || finished ? null : (
          <div class="row">
            <button type="button" class="primary big" disabled={blocked || busy || loading} onClick={() => (toBurn.length > 0 ? setConfirming(true) : void run())}>
              {mainLabel}
            </button>
            {summary && summary.transactions > 1 ? <span class="muted">{plural(summary.transactions, 'transaction')}, approved at once</span> : null}
          </div>
        )}
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        {progress && target.wallet ? <SendProgress progress={progress} walletName={target.wallet.name} cluster={cluster} /> : null}
        {outcome ? <Result outcome={outcome} names={known.current} walletName={target.wallet?.name ?? null} cluster={cluster} /> : null}
      </section>

      {preview ? (
        preview.accounts.length === 0 ? (
          <section class="panel">
            <p>This wallet has no token accounts.</p>
          </section>
        ) : (
          <AccountGroups groups={groups} choice={{ selected, busy, readOnly, canReclaim, onToggle: toggle, onSelect: setSelected }} />
        )
      ) : null}
      {confirming ? <ConfirmBurn accounts={toBurn} onConfirm={() => void run()} onCancel={() => setConfirming(false)} /> : null}
    </>
  );
}
