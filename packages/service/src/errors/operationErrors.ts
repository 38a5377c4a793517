/**
 * The catalogue's codes of an operation refused by the chain's state, the money rules, the relay's
 * rules or the fee sponsor's policy: nothing was sent. See catalogue.ts.
 */
import type { CinderErrorCode } from './contexts.ts';
import { type Entry, addressFields, blocked, blockedMembers, itemRefusal, plural, reasons, schemaFields, walletBusy } from './entry.ts';
import { formatNetSol, formatSol } from './format.ts';

type Codes = Extract<
  CinderErrorCode,
  | 'MINT_NOT_FOUND'
  | 'NO_TOKEN_ACCOUNT'
  | 'ACCOUNT_FROZEN'
  | 'CLOSE_AUTHORITY_NOT_OWNER'
  | 'CONFIDENTIAL_BALANCE_NOT_EMPTY'
  | 'INSUFFICIENT_SOL_FOR_FEE'
  | 'TRANSACTION_REJECTED'
  | 'INVALID_OWNER'
  | 'FEE_EXCEEDS_RECLAIM'
  | 'MINT_PAUSED'
  | 'BURN_NOT_PERMITTED'
  | 'NOTHING_TO_RECLAIM'
  | 'INVALID_TRANSACTION'
  | 'TRANSACTION_NOT_SIGNED'
  | 'PROGRAM_NOT_ALLOWED'
  | 'RELAY_TOKEN_INVALID'
  | 'INSTRUCTION_NOT_ALLOWED'
  | 'TRANSACTIONS_CONFLICT'
  | 'SPONSOR_DECLINED'
  | 'SPONSORED_OPERATION_IN_PROGRESS'
  | 'SPONSORED_OPERATION_TOO_LARGE'
>;

export const OPERATION_ERRORS: { readonly [C in Codes]: Entry<C> } = {
  // 400: the chain state does not allow the operation; nothing was sent
  MINT_NOT_FOUND: {
    status: 400,
    title: 'Mint not found',
    message: (c) =>
      `No account exists at mint address ${c.mint}. Nothing was sent.` +
      (c.localChain
        ? ' Cinder is running on its embedded local chain (no SOLANA_RPC_URL set), which only has the mints created on it; set SOLANA_RPC_URL to use a real cluster.'
        : ''),
  },
  NO_TOKEN_ACCOUNT: {
    status: 400,
    title: 'No token account',
    message: (c) => (c.reason === 'none' ? `${c.owner} has no token account of mint ${c.mint}. Nothing was sent.` : blocked(c)),
    members: blockedMembers,
  },
  ACCOUNT_FROZEN: {
    status: 400,
    title: 'Token account is frozen',
    message: (c) => (c.reason === 'simulation' ? 'A token account is frozen. Nothing was sent.' : blocked(c)),
    members: blockedMembers,
  },
  CLOSE_AUTHORITY_NOT_OWNER: { status: 400, title: 'Close authority is not the owner', message: blocked, members: blockedMembers },
  CONFIDENTIAL_BALANCE_NOT_EMPTY: { status: 400, title: 'Confidential balance not empty', message: blocked, members: blockedMembers },
  INSUFFICIENT_SOL_FOR_FEE: {
    status: 400,
    title: 'Insufficient SOL for fee',
    message: (c) => {
      if (c.reason === 'simulation') return `${c.field ? `${c.field}: ` : ''}${c.feePayer} does not hold enough SOL to pay the transaction fee. Nothing was sent.`;
      const of = c.transactions === undefined ? '' : ` of the ${plural(c.transactions, 'transaction')}`;
      return (
        `${c.separateFeePayer ? 'The fee payer ' : ''}${c.feePayer} holds ${formatSol(c.balance)} SOL; the fees${of} are ${formatSol(c.fees)} SOL ` +
        `and a fee payer must keep ${formatSol(c.reserve)} SOL (the rent-exempt minimum) or end at exactly 0, so ${formatSol(c.missing)} SOL more is needed. Nothing was sent.`
      );
    },
    members: (c) =>
      c.reason === 'simulation'
        ? {}
        : {
            balanceLamports: c.balance.toString(),
            feeLamports: c.fees.toString(),
            reserveLamports: c.reserve.toString(),
            missingLamports: c.missing.toString(),
          },
  },
  TRANSACTION_REJECTED: {
    status: 400,
    title: 'Transaction rejected by simulation',
    message: (c) => {
      switch (c.reason) {
        case 'item':
          return itemRefusal(c);
        case 'simulation':
          return `The transaction would fail on chain (${c.error}). Nothing was sent.`;
        case 'owners':
          return (
            `The transaction of owners ${c.owners.join(', ')} would fail on chain (${c.error}); ` +
            'their accounts changed since they were read, or cannot be closed. Preview again. Nothing was sent.'
          );
        case 'accounts':
          return `${[...new Set(c.skipped.map((s) => s.reason))].join('; ')}. Nothing was sent.`;
      }
    },
    members: (c) => (c.reason === 'accounts' ? { skippedAccounts: [...c.skipped] } : {}),
  },
  // the money rules and the whole-wallet reclaim (src/plan, src/operations)
  INVALID_OWNER: {
    status: 400,
    title: 'Invalid owner',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'addresses':
          return addressFields(c);
        case 'notAddress':
          return `${c.field} is not a valid base58 Solana address (32 bytes)`;
      }
    },
  },
  FEE_EXCEEDS_RECLAIM: {
    status: 400,
    title: 'Fees exceed what is reclaimed',
    message: (c) =>
      c.reason === 'sponsorNotRepaid'
        ? 'The fee sponsor only pays for transactions whose reclaimed rent repays it in full, leaving the owner a valid balance; this one would not. Nothing was sent.'
        : `The fees (${formatSol(c.fees)} SOL) are larger than what comes back (${formatSol(c.returns)} SOL): net ${formatNetSol(c.returns - c.fees)} SOL. ` +
          'Lower priorityFee, or send "allowNetLoss": true to accept the loss. Nothing was sent.',
    members: (c) =>
      c.reason === 'sponsorNotRepaid'
        ? {}
        : { reclaimLamports: c.returns.toString(), feeLamports: c.fees.toString(), netLamports: (c.returns - c.fees).toString() },
  },
  MINT_PAUSED: {
    status: 400,
    title: 'Mint is paused',
    message: (c) => (c.reason === 'simulation' ? 'The mint is paused. Nothing was sent.' : blocked(c)),
    members: blockedMembers,
  },
  BURN_NOT_PERMITTED: { status: 400, title: 'Burn not permitted', message: blocked, members: blockedMembers },
  NOTHING_TO_RECLAIM: {
    status: 400,
    title: 'Nothing to reclaim',
    message: (c) => {
      const skipped = c.skipped.length > 0 ? ` Skipped: ${reasons(c.skipped)}.` : '';
      if (c.reason === 'owners') return `None of the ${c.owners} owners has an account to close.${skipped} Nothing was sent.`;
      const asked = [
        'no empty token account to close',
        ...(c.burnListed ? ['no account of the listed mints to burn'] : []),
        ...(c.withdrawExcess ? ['no excess rent to withdraw'] : []),
      ];
      return `${c.owner} has nothing to reclaim: ${asked.join(', ')}.${skipped} Nothing was sent.`;
    },
    members: (c) => ({ skippedAccounts: [...c.skipped] }),
  },
  // the relay of transactions signed elsewhere (src/operations/relay.ts); nothing was sent
  INVALID_TRANSACTION: { status: 400, title: 'Invalid transaction', message: itemRefusal },
  TRANSACTION_NOT_SIGNED: { status: 400, title: 'Transaction not fully signed', message: itemRefusal },
  PROGRAM_NOT_ALLOWED: {
    status: 400,
    title: 'Program not allowed',
    message: (c) =>
      c.reason === 'item'
        ? itemRefusal(c)
        : `A sponsored transaction would invoke ${c.invoked}; the fee sponsor pays only for ${c.allowed.join(', ')} at any depth. Nothing was sent.`,
  },
  RELAY_TOKEN_INVALID: {
    status: 400,
    title: 'Relay token invalid',
    message: (c) => (c.reason === 'token' ? `${c.problem} Nothing was sent.` : `${c.field} ${c.problem}; the fee sponsor does not sign it. Nothing was sent.`),
  },
  INSTRUCTION_NOT_ALLOWED: { status: 400, title: 'Instruction not allowed', message: itemRefusal },
  TRANSACTIONS_CONFLICT: { status: 400, title: 'Transactions conflict', message: itemRefusal },
  // the fee sponsor's policy (src/operations/sponsorPolicy.ts)
  SPONSOR_DECLINED: {
    status: 403,
    title: 'Fee sponsor declines this wallet',
    message: (c) =>
      `The fee sponsor does not pay for ${c.owner} until ${c.until.toISOString()}: ${c.why}. Pay the fee from the wallet itself ` +
      '(send feePayer "owner" after funding it with a little SOL). Nothing was sent.',
    members: (c) => ({ until: c.until.toISOString() }),
  },
  SPONSORED_OPERATION_IN_PROGRESS: {
    status: 409,
    title: 'Sponsored operation in progress',
    message: (c) => {
      if (c.reason === 'busy') return walletBusy(c);
      const one = c.signatures.length === 1;
      const named = c.signatures.length > 0 ? ` (${c.signatures.join(', ')})` : '';
      return (
        `${c.what ?? `A sponsored operation of ${c.owner}`} is in flight: its owner-signed sponsored transaction${one ? '' : 's'}${named} may land until ` +
        `${c.expiresAt.toISOString()} at the latest (until ${one ? 'it lands or expires' : 'they land or expire'}); ` +
        "a wallet has one at a time, so that none of its transactions can make another fail at the sponsor's cost. Nothing was sent; retry once it has landed."
      );
    },
    members: (c) => (c.reason === 'busy' ? {} : { expiresAt: c.expiresAt.toISOString(), signatures: [...c.signatures] }),
  },
  SPONSORED_OPERATION_TOO_LARGE: {
    status: 400,
    title: 'Too large to sponsor',
    message: (c) =>
      `A sponsored operation holds at most ${c.max} transactions; this one needs ${c.transactions} (${c.accounts.toLocaleString('en-US')} accounts). ` +
      `Send the wallet ${formatSol(c.fees)} SOL or more for its fees and prepare again with feePayer "owner": the wallet pays its own fees and gets the whole rent back.`,
  },
};
