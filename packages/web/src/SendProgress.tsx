/**
 * While sending: one progress bar of accounts closed, each transaction's state behind a disclosure;
 * after: the result, naming what was burned and what was closed.
 */
import type { AccountPreview } from './api.ts';
import { amountWithSymbol } from './accounts.ts';
import { plural, short, sol } from './format.ts';
import type { Outcome, Progress, TxProgress } from './reclaim.ts';
import type { Cluster } from './settings.ts';

const TX_STATE: Record<TxProgress['state'], string> = {
  waiting: 'waiting for your approval',
  signed: 'signed, waiting to be sent',
  sending: 'sent, waiting to land',
  success: 'landed',
  failed: 'failed',
  pending: 'sent, not confirmed yet',
};

function explorerLink(signature: string, cluster: Cluster) {
  if (!cluster) return null;
  const suffix = cluster === 'mainnet-beta' ? '' : `?cluster=${cluster}`;
  return (
    <a href={`https://explorer.solana.com/tx/${signature}${suffix}`} target="_blank" rel="noopener noreferrer">
      View on Solana Explorer
    </a>
  );
}

function TransactionList({ transactions, cluster }: { transactions: TxProgress[]; cluster: Cluster }) {
  const landed = transactions.filter((t) => t.state === 'success').length;
  return (
    <details class="each-transaction">
      <summary>
        Each transaction ({landed.toLocaleString('en-US')} of {plural(transactions.length, 'transaction')} landed)
      </summary>
      <ol class="transactions">
        {transactions.map((t, i) => (
          <li key={i} class={`tx ${t.state}`} data-signature={t.signature ?? undefined} data-state={t.state}>
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
    </details>
  );
}

export function RetryNotice({ seconds }: { seconds: number | null }) {
  return seconds === null ? null : (
    <p class="notice" data-note="retry">
      This Cinder server’s limit of requests a minute was reached. Cinder tries again by itself in {plural(seconds, 'second')}.
    </p>
  );
}

export function SendProgress({ progress, walletName, cluster }: { progress: Progress; walletName: string; cluster: Cluster }) {
  const { closed, total } = progress.accounts;
  const toApprove = progress.transactions.filter((t) => t.state === 'waiting').length;
  return (
    <div class="progress" role="status">
      {progress.note ? <p class="notice">{progress.note}</p> : null}
      <RetryNotice seconds={progress.retryIn} />
      <p>
        {progress.stage === 'preparing'
          ? 'Preparing the transactions…'
          : progress.stage === 'signing' && toApprove > 0
            ? `Approve ${plural(toApprove, 'transaction')} in ${walletName}.`
            : 'Sending…'}
        {progress.sponsored ? ' The fee sponsor pays the network fees and is repaid from the reclaimed rent.' : ''}
      </p>
      {total > 0 ? (
        <>
          <progress max={total} value={closed} aria-label="Accounts closed" />
          <p data-progress={`${closed}/${total}`}>
            <strong>{closed.toLocaleString('en-US')}</strong> of {plural(total, 'account')} closed
          </p>
        </>
      ) : null}
      {progress.transactions.length > 0 ? <TransactionList transactions={progress.transactions} cluster={cluster} /> : null}
    </div>
  );
}

export function Result({
  outcome,
  names,
  walletName,
  cluster,
}: {
  outcome: Outcome;
  /** The preview's accounts by mint: the names of what was burned. */
  names: ReadonlyMap<string, AccountPreview>;
  walletName: string | null;
  cluster: Cluster;
}) {
  const burnedCount = outcome.burned.length;
  return (
    <div class="result" role="status">
      <h2>{outcome.allLanded ? 'Done' : 'Not everything landed'}</h2>
      {outcome.closedAccounts !== null && outcome.netLamports !== null ? (
        <>
          <p data-result="summary">
            Closed {plural(outcome.closedAccounts, 'account')}; you received <strong>{sol(outcome.netLamports)}</strong> after fees
            {outcome.sponsored ? ' (the fee sponsor was repaid)' : ''}.
          </p>
          <p data-result="closed">
            Closed: {plural(outcome.closedAccounts - burnedCount, 'empty account')}
            {burnedCount > 0 ? `, and ${plural(burnedCount, 'account')} after burning ${burnedCount === 1 ? 'its tokens' : 'their tokens'}` : ''}.
          </p>
          {burnedCount > 0 ? (
            <div data-result="burned">
              <p>Burned:</p>
              <ul>
                {outcome.burned.map((a) => {
                  const named = { ...a, name: names.get(a.mint)?.name ?? null, symbol: names.get(a.mint)?.symbol ?? null };
                  return (
                    <li key={a.address}>
                      {amountWithSymbol(named)} {named.name && named.symbol ? `(${named.name})` : ''} <span class="muted">mint {short(a.mint)}</span>
                    </li>
                  );
                })}
              </ul>
            </div>
          ) : null}
        </>
      ) : (
        <p>Some transactions did not land; the accounts below show what is left.</p>
      )}
      {walletName && (outcome.walletAdded.safetyChecks > 0 || outcome.walletAdded.memo) ? (
        <p class="muted" data-result="wallet-added">
          {walletAddedText(walletName, outcome.walletAdded)}
          {outcome.feeLamports !== null ? ` Network fees as signed: ${sol(outcome.feeLamports)}.` : ''}
        </p>
      ) : null}
      <TransactionList transactions={outcome.transactions} cluster={cluster} />
    </div>
  );
}

/** What the wallet added to what it signed, in words: the relay accepted it (docs/wallet-additions.md). */
function walletAddedText(wallet: string, added: { safetyChecks: number; memo: boolean }): string {
  const parts = [...(added.safetyChecks > 0 ? [plural(added.safetyChecks, 'safety check')] : []), ...(added.memo ? ['a memo'] : [])];
  const them = added.safetyChecks > 0 ? 'them' : 'it';
  return `Your wallet (${wallet}) added ${parts.join(' and ')} to each transaction before signing. Cinder checked ${them} and accepted ${them}: ${added.safetyChecks > 0 ? 'safety checks only read balances and move no funds' : 'a memo only records a note'}.`;
}
