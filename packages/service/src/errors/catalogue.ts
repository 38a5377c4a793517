/**
 * The catalogue of Cinder's errors: per code its HTTP status, its problem title, its ONE message
 * (written from the code's context, src/errors/contexts.ts) and the members it adds to the problem
 * body. A throw site names a code and gives the facts; it never words the message itself, so a
 * code reads the same wherever it is raised (the model of @solana/kit's SolanaError).
 *
 * Messages are for people and never hold any part of a private key: contexts carry only values
 * that are safe to echo, and a path is shown only when it cannot hold a key.
 */
import type { CinderErrorCode } from './contexts.ts';
import { CLIENT_ERRORS } from './clientErrors.ts';
import type { Entry } from './entry.ts';
import { OPERATION_ERRORS } from './operationErrors.ts';
import { REQUEST_ERRORS_400 } from './requestErrors.ts';
import { SERVER_ERRORS } from './serverErrors.ts';

export { PRIVATE_KEY_FORMATS } from './entry.ts';

/** Every code, in the order the API documents them (4xx of the request, of the chain and the rules, other 4xx, 5xx). */
export const CATALOGUE: { readonly [C in CinderErrorCode]: Entry<C> } = {
  ...REQUEST_ERRORS_400,
  ...OPERATION_ERRORS,
  ...CLIENT_ERRORS,
  ...SERVER_ERRORS,
};
