import { it } from 'node:test';
import { createCinderClient } from '../../src/client/index.js';
import { createTestApp } from '../helpers/app.ts';
import { walletToReclaim } from './reclaimFixture.ts';
it('dbg', async () => {
  const t = await createTestApp();
  const client = createCinderClient({ baseUrl: await t.app.listen({ host: '127.0.0.1', port: 0 }) });
  const w = await walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false });
  const p = await client.previewReclaim({ owner: w.signer.address, burn: [w.kept!.mint], priorityFee: 1e-7 });
  process.stderr.write('\nPREVIEW ' + JSON.stringify(p.summary) + JSON.stringify(p.accounts.map((a) => a.action)));
  try {
    const r = await client.reclaimRent({ userPrivateKey: w.secretKey, priorityFee: 1e-7, burn: [w.kept!.mint] });
    process.stderr.write('\nRESULT ' + JSON.stringify(r));
  } catch (e) {
    process.stderr.write('\nERR ' + String(e));
  }
  await t.close();
});
