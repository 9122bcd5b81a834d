// The package in a browser page with native ES modules and no bundler: headless Chromium
// (Debian's, driven by playwright-core) loads tests/browser/fixture/index.html, which imports
// 'ctxguard' through an import map pointing at /pkg/index.js (the `browser` entry).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

// Flags from TOOLCHAIN.md: root needs --no-sandbox; the networking flags stop Chromium from
// trying to reach hosts this machine cannot reach.
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

let server;
let base;
let context;
let profile;

before(async () => {
  ({ server, url: base } = await startServer({
    port: 0,
    quiet: true,
    mounts: { '/pkg/': join(root, 'pkg'), '/': join(here, 'fixture') },
  }));
  profile = mkdtempSync(join(tmpdir(), 'ctxguard-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
});

after(async () => {
  await context?.close();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the server sends the module as JavaScript and the .wasm as application/wasm', async () => {
  for (const [path, type] of [
    ['pkg/index.js', 'text/javascript; charset=utf-8'],
    ['pkg/ctxguard_wasm.js', 'text/javascript; charset=utf-8'],
    ['pkg/ctxguard_wasm_bg.wasm', 'application/wasm'],
  ]) {
    const res = await fetch(new URL(path, base));
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-type'), type, path);
    await res.arrayBuffer();
  }
  for (const path of ['pkg/../package.json', 'pkg/%2e%2e/Cargo.toml', 'pkg/..%2fCargo.toml', '..%2f..%2fetc/passwd']) {
    const res = await fetch(new URL(path, base));
    assert.equal(res.status, 404, path);
    await res.arrayBuffer();
  }
});

test('import { countTokens, ContextGuard } from "ctxguard" works in a plain page', async () => {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(base);
  await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
  const r = await page.evaluate(() => window.__result);
  await page.close();

  assert.equal(r.failed, undefined, r.failed);
  assert.deepEqual(problems, []);
  assert.deepEqual(r.hello, { o200k: 2, cl100k: 2 });
  assert.equal(r.great, 6);
  assert.equal(r.japanese, 2);
  // system: 3 framing + 1 role + 4 ('You are terse.'); user: 3 + 1 + 2 ('hello world'); 3 priming.
  assert.equal(r.total, 17);
  assert.equal(r.metrics.usedTokens, r.total);
  assert.equal(r.metrics.usableLimit, 900);
  assert.equal(r.metrics.state, 'ok');
  assert.equal(r.budget.triggerLimit, 720);
  assert.equal(r.model.encoding, 'o200k_base');
  assert.ok(r.knownCount > 10);
  assert.deepEqual(r.error, { isError: true, name: 'CtxguardError', code: 'UNKNOWN_ENCODING' });
  assert.equal(r.afterError, 2);
  assert.match(r.version, /^\d+\.\d+\.\d+/);
});
