// The page side: the shared harness reading inputs over HTTP from the benchmark's own server.
import { makeHarness } from './harness.mjs';

const h = makeHarness(async (file) => {
  const r = await fetch(`/inputs/${file}`);
  if (!r.ok) throw new Error(`GET /inputs/${file}: ${r.status}`);
  return r.text();
});

export const { init, run, finish, chatExtras } = h;
