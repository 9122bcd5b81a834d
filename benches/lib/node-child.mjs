// A Node child process running the shared harness: the parent sends { id, method, args } over IPC
// and gets { id, ok, value | error } back. The parent kills the process when a call runs past the cap.
import fs from 'node:fs';
import path from 'node:path';
import { makeHarness } from './harness.mjs';

const dir = process.env.CTXGUARD_BENCH_INPUTS;
const h = makeHarness(async (file) => fs.readFileSync(path.join(dir, file), 'utf8'));

process.on('message', async ({ id, method, args }) => {
  try {
    const value = await h[method](...(args ?? []));
    process.send({ id, ok: true, value });
  } catch (e) {
    process.send({ id, ok: false, error: String((e && e.stack) || e) });
  }
});
process.send({ ready: true });
