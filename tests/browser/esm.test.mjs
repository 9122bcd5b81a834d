// The package in a browser page with native ES modules and no bundler: headless Chromium and
// Firefox (tests/browser/browsers.mjs) load tests/browser/fixture/index.html, which imports
// 'ctxguard' through an import map pointing at /pkg/index.js (the `browser` entry).
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { BROWSERS, launch } from './browsers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

let server;
let base;

before(async () => {
  ({ server, url: base } = await startServer({
    port: 0,
    quiet: true,
    mounts: { '/pkg/': join(root, 'pkg'), '/': join(here, 'fixture') },
  }));
});

after(() => server?.close());

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

for (const name of BROWSERS) describe(name, () => {
  let browser;
  before(async () => {
    browser = await launch(name);
  });
  after(() => browser?.close());

  test('import { countTokens, ContextGuard } from "ctxguard" works in a plain page', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    await page.waitForFunction(() => window.__result !== undefined, undefined, { timeout: 60_000 });
    const r = await page.evaluate(() => window.__result);
    await page.close();

    assert.equal(r.failed, undefined, r.failed);
    assert.deepEqual(page.problems, []);
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
    // The minified bundle keeps the class's name (scripts/finish-pkg.mjs), without an ES2022 static block.
    assert.equal(r.className, 'ContextGuard');
  });

  test('the counting-only builds load in a plain page and fetch only their own .wasm', async () => {
    const page = await browser.newPage();
    const fetched = [];
    page.on('request', (req) => {
      if (req.url().endsWith('.wasm')) fetched.push(new URL(req.url()).pathname);
    });
    await page.goto(base);
    await page.waitForFunction(() => window.__result !== undefined, undefined, { timeout: 60_000 });
    fetched.length = 0;
    const r = await page.evaluate(async () => {
      const o200k = await import('/pkg/o200k/count/index.js');
      const cl100k = await import('/pkg/cl100k/count/index.js');
      let other = null;
      try {
        o200k.countTokens('x', { encoding: 'cl100k_base' });
      } catch (e) {
        other = { name: e.name, code: e.code };
      }
      return {
        exports: Object.keys(o200k).sort(),
        hello: o200k.countTokens('hello world'),
        japanese: o200k.countTokens('こんにちは世界', { model: 'gpt-4o' }),
        great: cl100k.countTokens('tiktoken is great!'),
        model: cl100k.modelInfo('gpt-4').encoding,
        other,
      };
    });
    await page.close();
    assert.deepEqual(page.problems, []);
    assert.deepEqual(r, {
      exports: ['countTokens', 'knownModels', 'loadVocabulary', 'memoryStats', 'modelInfo', 'version'],
      hello: 2,
      japanese: 2,
      great: 6,
      model: 'cl100k_base',
      other: { name: 'CtxguardError', code: 'UNKNOWN_ENCODING' },
    });
    assert.deepEqual(fetched.sort(), ['/pkg/cl100k/count/ctxguard_wasm_bg.wasm', '/pkg/o200k/count/ctxguard_wasm_bg.wasm']);
  });
});
