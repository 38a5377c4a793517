/**
 * What the pipeline treats as a problem of the plan (a preview shows it, the other doors throw it)
 * is decided by error codes, never by HTTP statuses (src/operations/compile.ts isPlanProblem).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CinderError } from '../../src/errors.ts';
import { isPlanProblem } from '../../src/operations/compile.ts';

it('the money rules, the chain state and the sponsor policy are plan problems; the RPC, the sponsor unavailable and other 400s are not', () => {
  for (const code of ['INSUFFICIENT_SOL_FOR_FEE', 'FEE_EXCEEDS_RECLAIM', 'TRANSACTION_REJECTED', 'SPONSOR_DECLINED', 'SPONSORED_OPERATION_IN_PROGRESS'] as const) {
    assert.equal(isPlanProblem(new CinderError(code, 'x')), true, code);
  }
  // Statuses 400, 503 and 503: a rule on statuses would get at least one of them wrong.
  for (const code of ['INVALID_MINT', 'RPC_UNAVAILABLE', 'SPONSOR_UNAVAILABLE'] as const) {
    assert.equal(isPlanProblem(new CinderError(code, 'x')), false, code);
  }
  assert.equal(isPlanProblem(new Error('INSUFFICIENT_SOL_FOR_FEE')), false);
});
