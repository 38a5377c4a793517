/**
 * The worker pool's entry: plain JavaScript, so a worker starts however the main thread loaded
 * TypeScript (`node --import tsx`, the `tsx` CLI, or `cinder serve`, which registers tsx through
 * its API and so leaves nothing in execArgv for workers to inherit).
 */
import { register } from 'tsx/esm/api';

register();
const { default: run } = await import('./worker.ts');
export default run;
