/**
 * What the pipeline treats as a problem of the plan (a preview shows it, the other doors throw it)
 * is decided by error codes, never by HTTP statuses (src/operations/compile.ts isPlanProblem).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CinderError } from '../../src/errors.ts';
import { isPlanProblem } from '../../src/operations/compile.ts';

it('the money rules, the chain state and the sponsor policy are plan problems; the RPC, the sponsor unavailable and other 400s are not', () => {
  const until = new Date('2026-01-02T03:04:05.000Z');
  const problems = [
    new CinderError('INSUFFICIENT_SOL_FOR_FEE', { reason: 'simulation', feePayer: 'Own1' }),
    new CinderError('FEE_EXCEEDS_RECLAIM', { reason: 'sponsorNotRepaid' }),
    new CinderError('TRANSACTION_REJECTED', { reason: 'simulation', error: 'custom program error 0x11' }),
    new CinderError('SPONSOR_DECLINED', { owner: 'Own1', until, why: 'its sponsored transactions failed' }),
    new CinderError('SPONSORED_OPERATION_IN_PROGRESS', { reason: 'inFlight', owner: 'Own1', signatures: [], expiresAt: until }),
  ];
  for (const error of problems) assert.equal(isPlanProblem(error), true, error.code);
  // Statuses 400, 503 and 503: a rule on statuses would get at least one of them wrong.
  const others = [
    new CinderError('INVALID_MINT', { reason: 'notMint', mint: 'Mint1' }),
    new CinderError('RPC_UNAVAILABLE', { reason: 'noAnswer' }),
    new CinderError('SPONSOR_UNAVAILABLE', { reason: 'cannotPay' }),
  ];
  for (const error of others) assert.equal(isPlanProblem(error), false, error.code);
  assert.equal(isPlanProblem(new Error('INSUFFICIENT_SOL_FOR_FEE')), false);
});
