// The package in a Vite app, as a user installs it: pkg/ is packed (npm pack) and unpacked into
// the node_modules of a copy of tests/vite-app/app/, which imports `ctxguard` on the main thread
// and `ctxguard/worker` with a module worker importing `ctxguard/worker/serve`. There is no Vite
// config: `vite build` (the root package.json's pinned vite) must emit the worker and the .wasm
// by itself, and the built app must give Node's counts in headless Chromium and Firefox and run
// prepare in the worker with the summarizer on the main thread. The dev server is checked the same
// way.
// Screenshots: artifacts/vite-app/.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ContextGuard, countMessages, countTokens, loadVocabulary, version } from 'ctxguard';
import { startServer } from '../../scripts/serve.mjs';
import { BROWSERS, launch } from '../browser/browsers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const artifacts = join(root, 'artifacts', 'vite-app');
const VITE = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
const { CONFIG, conversation } = await import(pathToFileURL(join(here, 'app', 'conversation.js')).href);

let dir;
let app;
const browsers = {};

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'ctxguard-vite-'));
  app = join(dir, 'app');
  cpSync(join(here, 'app'), app, { recursive: true });
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], { cwd: join(root, 'pkg'), encoding: 'utf8' }));
  const target = join(app, 'node_modules', 'ctxguard');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(dir, filename), '-C', target, '--strip-components=1']);
  for (const name of BROWSERS) browsers[name] = await launch(name, { viewport: { width: 1000, height: 800 } });
  await loadVocabulary('llama3');
});

after(async () => {
  for (const b of Object.values(browsers)) await b.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What the app must show: the same figures computed here, in Node. */
function expected() {
  const messages = conversation(40);
  const guard = new ContextGuard(CONFIG);
  const used = guard.measure(messages).usedTokens;
  guard.free();
  const llama = countTokens('Die Katze sitzt auf der Matte. 猫がマットの上に座っている。', { model: 'llama3.1:8b' });
  return { version: version(), hello: countTokens('hello world'), total: countMessages(messages, { model: 'gpt-4o' }).total, used, llama };
}

/** Loads the app at `url`, waits for its result (the dev server may reload once while it optimizes dependencies). */
async function runApp(name, url, shot) {
  const page = await browsers[name].newPage();
  try {
    for (let attempt = 1; ; attempt++) {
      await page.goto(url);
      try {
        await page.waitForFunction(() => window.__result !== undefined, undefined, { timeout: 60_000 });
        break;
      } catch (e) {
        if (attempt >= 2 || !/context was destroyed|navigation/i.test(e.message)) throw e;
      }
    }
    const r = await page.evaluate(() => window.__result);
    await page.screenshot(join(artifacts, shot), { fullPage: true });
    assert.equal(r.failed, undefined, r.failed);
    const want = expected();
    assert.deepEqual(r.main, want, 'main-thread counts equal Node\'s');
    assert.equal(r.inWorker.version, want.version);
    assert.equal(r.inWorker.used, want.used, 'the worker counts what Node counts');
    assert.equal(r.inWorker.compaction, 'completed');
    assert.match(r.inWorker.summary, /^\[ctxguard:summary\]/);
    assert.ok(r.inWorker.heartbeats >= 2, `${r.inWorker.heartbeats} heartbeats`);
    assert.deepEqual(r.inWorker.asked, [{ messages: r.inWorker.asked[0].messages, signal: true, onMainThread: true }]);
    assert.equal(r.wasmUrl.length, 1, `the .wasm is loaded once: ${r.wasmUrl}`);
    return { r, problems: page.problems.filter((p) => !/\[vite\]/.test(p)) };
  } finally {
    await page.close();
  }
}

test('vite build, with no Vite config, emits the app, the worker and the .wasm', () => {
  const out = spawnSync(process.execPath, [VITE, 'build'], { cwd: app, encoding: 'utf8' });
  assert.equal(out.status, 0, `vite build failed:\n${out.stdout}\n${out.stderr}`);
  const assets = readdirSync(join(app, 'dist', 'assets'));
  assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1, assets.join(', '));
  assert.equal(assets.filter((f) => /^guard\.worker-.*\.js$/.test(f)).length, 1, assets.join(', '));
  assert.doesNotMatch(out.stdout + out.stderr, /warn|error/i, 'vite build printed a warning');
});

for (const name of BROWSERS) {
  test(`the built app in ${name}: Node's counts on the main thread, prepare in the worker with the summarizer on the main thread`, async () => {
    const { server, url } = await startServer({ port: 0, quiet: true, mounts: { '/': join(app, 'dist') } });
    try {
      const { problems } = await runApp(name, url, `build-${name}.png`);
      assert.deepEqual(problems, []);
    } finally {
      server.close();
    }
  });
}

test(`the Vite dev server, with no Vite config, serves the same app (${BROWSERS.join(', ')})`, async () => {
  const { createServer } = await import('vite');
  const server = await createServer({ root: app, configFile: false, logLevel: 'silent', server: { port: 0, host: '127.0.0.1', strictPort: false } });
  await server.listen();
  try {
    const url = server.resolvedUrls.local[0];
    for (const name of BROWSERS) await runApp(name, url, `dev-${name}.png`);
  } finally {
    await server.close();
  }
});
