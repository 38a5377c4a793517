/**
 * A wallet's token accounts in groups, each with its count and the rent it holds: the accounts
 * that close, those holding tokens (each with a burn choice, and one "select all to burn"), NFTs
 * (kept), those that cannot be closed (each with its reason), anything else kept. Made for
 * hundreds of accounts: a long group's rows fold away behind their summary.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { AccountPreview } from './api.ts';
import { amountWithSymbol, balanceOf, blockerOf, burnable, SKIP_REASONS, TOKEN_2022, tokenLabel, type Group } from './accounts.ts';
import { plural, short, sol } from './format.ts';

/** A group with more rows than this shows them folded, behind its summary. */
const OPEN_UP_TO = 25;

function whatHappens(account: AccountPreview, canReclaim: boolean): string {
  const blocker = blockerOf(account);
  if (blocker !== null) return `Cannot close: ${SKIP_REASONS[blocker] ?? blocker}`;
  switch (account.action) {
    case 'close':
      return canReclaim ? 'Closes' : 'Closes once this wallet can pay its fees';
    case 'unwrap':
      return canReclaim ? 'Unwraps and closes' : 'Unwraps and closes once this wallet can pay its fees';
    case 'burn_and_close':
      return `Burns ${amountWithSymbol(account)} and closes`;
    default:
      if (account.looksLikeNft) {
        return 'Kept: looks like an NFT. Burning it here would leave its metadata account, and the rent in it, behind, so Cinder leaves it alone.';
      }
      return 'Kept: holds tokens';
  }
}

interface Choice {
  selected: ReadonlySet<string>;
  busy: boolean;
  readOnly: boolean;
  canReclaim: boolean;
  onToggle: (mint: string) => void;
  onSelect: (mints: ReadonlySet<string>) => void;
}

function Rows({ accounts, choice }: { accounts: AccountPreview[]; choice: Choice }) {
  return (
    <table class="accounts">
      <thead>
        <tr>
          <th scope="col">Token</th>
          <th scope="col">Balance</th>
          <th scope="col">Program</th>
          <th scope="col">Rent held</th>
          <th scope="col">What happens</th>
        </tr>
      </thead>
      <tbody>
        {accounts.map((a) => (
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
            <td data-label="Rent held" data-lamports={a.lamports}>
              {sol(a.lamports)}
            </td>
            <td data-label="What happens">
              <div class="what">
                {whatHappens(a, choice.canReclaim)}
                {burnable(a) && !choice.readOnly ? (
                  <label class="burn">
                    <input type="checkbox" checked={choice.selected.has(a.mint)} disabled={choice.busy} onChange={() => choice.onToggle(a.mint)} />
                    Burn {amountWithSymbol(a)}
                  </label>
                ) : null}
              </div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const TITLES: Record<Group['name'], string> = {
  close: 'Accounts that close',
  burn: 'Accounts holding tokens',
  nft: 'NFTs, kept',
  skip: 'Accounts that cannot be closed',
  kept: 'Other accounts, kept',
};

function groupLine(group: Group, canReclaim: boolean): string {
  const count = plural(group.accounts.length, 'account');
  if (group.name === 'close') return canReclaim ? `${count}, returning ${sol(group.lamports)} of rent` : `${count}, holding ${sol(group.lamports)} of rent`;
  if (group.name === 'burn') return `${count}, holding ${sol(group.lamports)} of rent: burn a token to close its account and get its rent back`;
  return `${count}, holding ${sol(group.lamports)} of rent`;
}

export function AccountGroups({ groups, choice }: { groups: Group[]; choice: Choice }) {
  return (
    <>
      {groups.map((group) => {
        const mints = new Set(group.accounts.filter(burnable).map((a) => a.mint));
        const allSelected = mints.size > 0 && [...mints].every((m) => choice.selected.has(m));
        return (
          <section key={group.name} class="panel group" data-group={group.name} aria-labelledby={`group-${group.name}`}>
            <h2 id={`group-${group.name}`}>
              {TITLES[group.name]} <span class="count" data-count={group.accounts.length}>{group.accounts.length.toLocaleString('en-US')}</span>
            </h2>
            <p class="muted" data-lamports-total={group.lamports.toString()}>
              {groupLine(group, choice.canReclaim)}
            </p>
            {group.name === 'burn' && !choice.readOnly ? (
              <div class="row">
                <button type="button" disabled={choice.busy || allSelected} onClick={() => choice.onSelect(new Set([...choice.selected, ...mints]))}>
                  Select all to burn ({plural(mints.size, 'token')})
                </button>
                {[...mints].some((m) => choice.selected.has(m)) ? (
                  <button type="button" disabled={choice.busy} onClick={() => choice.onSelect(new Set([...choice.selected].filter((m) => !mints.has(m))))}>
                    Clear the selection
                  </button>
                ) : null}
              </div>
            ) : null}
            {group.accounts.length > OPEN_UP_TO && group.name !== 'burn' ? (
              <details>
                <summary>Show the {plural(group.accounts.length, 'account')}</summary>
                <Rows accounts={group.accounts} choice={choice} />
              </details>
            ) : (
              <Rows accounts={group.accounts} choice={choice} />
            )}
          </section>
        );
      })}
    </>
  );
}

/** The confirmation before anything is burned: every token and amount, by name and mint. */
export function ConfirmBurn({ accounts, onConfirm, onCancel }: { accounts: AccountPreview[]; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby="confirm-title" onCancel={onCancel}>
      <h2 id="confirm-title">Burn {accounts.length === 1 ? 'this token' : `these ${accounts.length.toLocaleString('en-US')} tokens`} for good?</h2>
      <p>Burning destroys them; it cannot be undone. Their accounts are then closed and the rent comes back to you.</p>
      <ul class="burn-list" tabIndex={0} aria-label="The tokens to burn">
        {accounts.map((a) => (
          <li key={a.address} data-burn={a.mint}>
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
