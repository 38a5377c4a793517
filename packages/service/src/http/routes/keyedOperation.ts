/**
 * The keyed door of burn and reclaim: the caller's key is decoded, and the pipeline plans, signs
 * and lands with it (src/operations/pipeline.ts takes the one lock of the operation: a duplicate
 * joins the running one, another operation of the wallet waits its turn). The deadline counts from
 * the request's arrival (reply.elapsedTime): under load the body parse, the key decode and the
 * queue before the handler are part of the caller's wait too. The signatures about to be sent go
 * into the request's Idempotency-Key record first (src/http/idempotency.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { parsePrivateKeyWithForm, type PrivateKeyInput } from '../../keys/parsePrivateKey.ts';
import type { OperationKind, Pipeline } from '../../operations/pipeline.ts';

export async function executeKeyed(
  { config, pipeline }: { config: Pick<Config, 'operationDeadlineMs'>; pipeline: Pipeline },
  { request, reply }: { request: FastifyRequest; reply: FastifyReply },
  userPrivateKey: PrivateKeyInput,
  operation: { operation: OperationKind; priorityFeeLamports: bigint; allowNetLoss: boolean },
) {
  const deadline = Date.now() + config.operationDeadlineMs - Math.round(reply.elapsedTime);
  const { signer, isSeed } = await parsePrivateKeyWithForm(userPrivateKey);
  return pipeline.execute({ owner: signer.address, ...operation, feePayer: 'auto', keyIsSeed: isSeed }, signer, {
    deadline,
    recordSent: (signatures, lastValidBlockHeight) => request.cinderRecordSent(signatures, lastValidBlockHeight),
  });
}
