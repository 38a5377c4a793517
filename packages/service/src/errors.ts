/**
 * The one error type of Cinder. Every failure a client can see has a stable SCREAMING_SNAKE code;
 * its HTTP status, its problem+json title, its one message and the members it adds to the problem
 * body all come from the catalogue (src/errors/catalogue.ts), written from the code's typed
 * context (src/errors/contexts.ts). A throw site gives the facts, never the words:
 *
 *   throw new CinderError('TRANSACTION_NOT_FOUND', { signature });
 *
 * Field problems (`errors`) and response headers (Retry-After) are given beside the context.
 * Messages never contain any part of a private key: contexts hold only values safe to echo.
 */
import { CATALOGUE } from './errors/catalogue.ts';
import type { CinderErrorCode, CinderErrorContext, CinderProblemMembersOf, FieldProblem } from './errors/contexts.ts';

export type * from './errors/contexts.ts';
export { PRIVATE_KEY_FORMATS } from './errors/catalogue.ts';

export const ERROR_CODES = Object.keys(CATALOGUE) as CinderErrorCode[];

export function statusOf(code: CinderErrorCode): number {
  return CATALOGUE[code].status;
}

export function titleOf(code: CinderErrorCode): string {
  return CATALOGUE[code].title;
}

/** The code's one message, written from its context. */
export function messageOf<C extends CinderErrorCode>(code: C, context: CinderErrorContext<C>): string {
  return (CATALOGUE[code].message as (context: CinderErrorContext<C>) => string)(context);
}

/** The members the code adds to its problem body, from its context ({} for most codes). */
export function membersOf<C extends CinderErrorCode>(code: C, context: CinderErrorContext<C>): CinderProblemMembersOf<C> {
  const members = CATALOGUE[code].members as ((context: CinderErrorContext<C>) => CinderProblemMembersOf<C>) | undefined;
  return members ? members(context) : ({} as CinderProblemMembersOf<C>);
}

export interface CinderErrorOptions {
  errors?: FieldProblem[];
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A context argument that may be left out when the code's context has no required member. */
type ContextArgs<C extends CinderErrorCode> = Record<never, never> extends CinderErrorContext<C>
  ? [context?: CinderErrorContext<C>, options?: CinderErrorOptions]
  : [context: CinderErrorContext<C>, options?: CinderErrorOptions];

export class CinderError<C extends CinderErrorCode = CinderErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  /** The facts the message was written from. */
  readonly context: CinderErrorContext<C>;
  readonly errors: FieldProblem[] | undefined;
  readonly headers: Record<string, string>;
  /** The members this error adds to its problem body. */
  readonly extensions: Readonly<Record<string, unknown>> & CinderProblemMembersOf<C>;

  constructor(code: C, ...args: ContextArgs<C>) {
    const [given, options = {}] = args;
    const context = (given ?? {}) as CinderErrorContext<C>;
    super(messageOf(code, context), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CinderError';
    this.code = code;
    this.status = statusOf(code);
    this.context = context;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = membersOf(code, context) as CinderError<C>['extensions'];
  }
}

/** A CinderError of the code, with the code's context: `throw cinderError('TRANSACTION_NOT_FOUND', { signature })`. */
export function cinderError<C extends CinderErrorCode>(code: C, ...args: ContextArgs<C>): CinderError<C> {
  return new CinderError<C>(code, ...args);
}

/** Whether `error` is a CinderError (of `code`, when given); a match narrows its code, context and members. */
export function isCinderError<C extends CinderErrorCode = CinderErrorCode>(error: unknown, code?: C): error is CinderError<C> {
  return error instanceof CinderError && (code === undefined || error.code === code);
}

/** The RFC 9457 body of an error. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: CinderErrorCode;
  errors?: FieldProblem[];
  [extension: string]: unknown;
}

export function problemTypeOf(code: CinderErrorCode): string {
  return `urn:cinder:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}

export function toProblem(error: CinderError): ProblemDetails {
  return {
    ...error.extensions,
    type: problemTypeOf(error.code),
    title: titleOf(error.code),
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}
