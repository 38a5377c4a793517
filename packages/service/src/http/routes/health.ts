import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { CinderError } from '../../errors.ts';

export function registerHealthRoutes(app: CinderApp, { chain }: Pick<AppDeps, 'chain'>): void {
  app.get(
    '/health',
    {
      config: {
        problemCodes: [],
      },
      // JSON.stringify, not the schema's serializer: a liveness probe, often a process's first
      // request, then loads none (fast-json-stringify and Ajv, compiled on a route's first answer:
      // src/http/lazyCompilers.ts). Its answer is one fixed field, so nothing can leak past the schema.
      serializerCompiler: () => (data) => JSON.stringify(data),
      schema: {
        summary: 'Liveness: the process is up',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/ready',
    {
      config: {
        problemCodes: ['RPC_UNAVAILABLE'],
      },
      schema: {
        summary: 'Readiness: the Solana RPC answers',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: Type.Ref('Problem') },
      },
    },
    async () => {
      if (!(await chain.isHealthy())) {
        throw new CinderError('RPC_UNAVAILABLE', { reason: 'notAnswering' }, { headers: { 'retry-after': '5' } });
      }
      return { status: 'ready' as const };
    },
  );
}
