/**
 * The catalogue's 5xx: the server, its RPC node, its stores or its fee sponsor cannot serve now. See catalogue.ts.
 */
import type { CinderErrorCode } from './contexts.ts';
import type { Entry } from './entry.ts';
import { formatSol } from './format.ts';

type Codes = Extract<
  CinderErrorCode,
  | 'INTERNAL_ERROR'
  | 'RPC_UNAVAILABLE'
  | 'SERVICE_UNAVAILABLE'
  | 'SPONSOR_UNAVAILABLE'
>;

export const SERVER_ERRORS: { readonly [C in Codes]: Entry<C> } = {
  // server side
  INTERNAL_ERROR: {
    status: 500,
    title: 'Internal Server Error',
    message: () => 'An unexpected error occurred. The request id identifies it in the server log.',
  },
  RPC_UNAVAILABLE: {
    status: 503,
    title: 'Solana RPC unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'notAnswering':
          return 'The Solana RPC node does not answer.';
        case 'noAnswer':
          return 'The Solana RPC node did not answer; nothing was sent. Try again shortly.';
        case 'cannotSend':
          return 'The Solana RPC node could not be reached to send the transactions; nothing was sent. Try again shortly.';
      }
    },
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    title: 'Service unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'walletCapacity':
          return 'Wallet generation is at capacity; retry in a moment.';
        case 'shuttingDown':
          return 'The server is shutting down.';
        case 'idempotencyRecord':
          return 'The idempotency store is unavailable, so the burn could not be recorded before sending it; nothing was sent. Retry shortly.';
        case 'idempotencyBegin':
          return 'The idempotency store is unavailable, so a burn with an Idempotency-Key cannot be run safely; nothing was sent. Retry shortly.';
        case 'lockStore':
          return 'The lock store (Redis) is unavailable, so this operation cannot be run safely; nothing was sent. Retry shortly.';
        case 'open':
          return `The service has ${c.open} ${c.what} open, its limit (${c.setting}); retry in a moment.`;
      }
    },
  },
  SPONSOR_UNAVAILABLE: {
    status: 503,
    title: 'Fee sponsor unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'cannotPay':
          return 'The fee sponsor cannot pay fees right now. Nothing was sent; try again later.';
        case 'lowBalance':
          return `The fee sponsor holds ${formatSol(c.lamports)} SOL, too little to pay fees now. Nothing was sent; try again later.`;
        case 'notConfigured':
          return 'No fee sponsor is configured on this service (SPONSOR_KEYPAIR is not set), so it pays no fees: send feePayer "owner" and pay the fee from the owner\'s SOL. Nothing was sent.';
        case 'lossBudget': {
          const inFlight = c.atRisk > 0n ? ` and ${formatSol(c.atRisk)} SOL is at risk in sponsored transactions in flight` : '';
          return (
            `The fee sponsor has reached its loss budget of ${formatSol(c.budget)} SOL an hour: ${formatSol(c.lost)} SOL was lost to sponsored transactions that failed on chain in the last hour${inFlight}; ` +
            `it pays again from ${c.until.toISOString()}. Nothing was sent.`
          );
        }
      }
    },
  },
};
