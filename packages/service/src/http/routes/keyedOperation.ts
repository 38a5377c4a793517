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
import type { KeyPairSigner } from '@solana/kit';
import { CinderError, type FieldProblem } from '../../errors.ts';
import { parsePrivateKeyWithForm, type PrivateKeyInput } from '../../keys/parsePrivateKey.ts';
import type { PriorityFeeRequest } from '../../plan/priorityFee.ts';
import type { OperationKind, Pipeline } from '../../operations/pipeline.ts';

/** A keyed door's deadline: the operation deadline, counted from the request's arrival. */
export const keyedDeadline = (config: Pick<Config, 'operationDeadlineMs'>, reply: FastifyReply): number =>
  Date.now() + config.operationDeadlineMs - Math.round(reply.elapsedTime);

/**
 * One key field of a request with many (a keyed reclaim of many wallets): the signer, or the
 * field's problem, so that every bad key of the request is named at once. Never echoes the key.
 */
export async function parseKeyField(input: PrivateKeyInput, field: string): Promise<{ signer: KeyPairSigner; isSeed: boolean } | FieldProblem> {
  try {
    return await parsePrivateKeyWithForm(input);
  } catch (error) {
    if (!(error instanceof CinderError)) throw error;
    return { field, message: error.errors?.[0]?.message ?? 'is not a valid private key' };
  }
}

export async function executeKeyed(
  { config, pipeline }: { config: Pick<Config, 'operationDeadlineMs'>; pipeline: Pipeline },
  { request, reply }: { request: FastifyRequest; reply: FastifyReply },
  userPrivateKey: PrivateKeyInput,
  operation: { operation: OperationKind; priorityFeeLamports: PriorityFeeRequest; allowNetLoss: boolean },
) {
  const deadline = keyedDeadline(config, reply);
  const { signer, isSeed } = await parsePrivateKeyWithForm(userPrivateKey);
  return pipeline.execute({ owner: signer.address, ...operation, feePayer: 'auto', keyIsSeed: isSeed }, signer, {
    deadline,
    recordSent: (signatures, lastValidBlockHeight) => request.cinderRecordSent(signatures, lastValidBlockHeight),
  });
}
