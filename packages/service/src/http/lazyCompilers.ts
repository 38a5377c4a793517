/**
 * Fastify's own schema compilers (Ajv for requests, fast-json-stringify for responses), each
 * route's validator and serializer compiled on the route's first use instead of at start. Fastify
 * compiles every schema of every route before it listens; that, and loading Ajv and
 * fast-json-stringify, is a large part of the start, for routes a given instance may never serve
 * (and the tests, which build an app hundreds of times, pay it each time).
 *
 * What a request sees is the same: the same compilers, made by the same factories with the same
 * options (the app's `ajv` option, its shared schemas), are asked for the same schemas; only the
 * moment differs. So a schema Ajv cannot compile fails at its route's first request (a 500) where
 * it would have failed the start: the route tests build every route's validator on their first
 * request.
 *
 * One difference Fastify makes for a compiler it did not choose itself: it no longer lower-cases the
 * property names of a `headers` schema. No route here declares a headers schema.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** What Fastify gives a compiler for one schema of one route. */
type RouteSchema = { schema: unknown; method: string; url: string; httpPart?: string; httpStatus?: string; contentType?: string };
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;
/** A factory of compilers: (the shared schemas, the compiler's options) → (a route's schema) → its function. */
type Factory<F> = (externalSchemas: unknown, options: unknown) => (routeSchema: RouteSchema) => F;

/** The packages Fastify would load itself, from where Fastify is: the versions it was made with. */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));

/** The validator factory Fastify uses when it is given none (one Ajv per set of shared schemas and options). */
let defaultBuildValidator: Factory<Validate> | undefined;
/** The serializer factory Fastify uses when it is given none. */
let defaultBuildSerializer: Factory<Serialize> | undefined;

const buildValidator: Factory<Validate> = (externalSchemas, options) => {
  let compiler: ((routeSchema: RouteSchema) => Validate) | undefined;
  return (routeSchema) => {
    let validate: Validate | undefined;
    const lazy: Validate = (data) => {
      if (!validate) {
        defaultBuildValidator ??= (fastifyRequire('@fastify/ajv-compiler') as () => Factory<Validate>)();
        compiler ??= defaultBuildValidator(externalSchemas, options);
        validate = compiler(routeSchema);
      }
      const result = validate(data);
      // Fastify reads `errors` from the function it was given, after a failed validation.
      lazy.errors = validate.errors;
      return result;
    };
    return lazy;
  };
};

const buildSerializer: Factory<Serialize> = (externalSchemas, options) => {
  let compiler: ((routeSchema: RouteSchema) => Serialize) | undefined;
  return (routeSchema) => {
    let serialize: Serialize | undefined;
    return (data) => {
      if (!serialize) {
        defaultBuildSerializer ??= (fastifyRequire('@fastify/fast-json-stringify-compiler') as () => Factory<Serialize>)();
        compiler ??= defaultBuildSerializer(externalSchemas, options);
        serialize = compiler(routeSchema);
      }
      return serialize(data);
    };
  };
};

/** Fastify's `schemaController` option: its default compilers, made on first use. */
export const lazySchemaCompilers = { compilersFactory: { buildValidator, buildSerializer } } as unknown as NonNullable<FastifyServerOptions['schemaController']>;
