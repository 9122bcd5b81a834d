// Browser test of the demo page (www/): Debian's Chromium driven by playwright-core, as a person
// would use the page. Needs the built package in pkg/ (make build). Run: node --test tests/page/
// Screenshots go to artifacts/page/. Any page error or console error fails the test that caused it.

import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { access, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const artifacts = join(root, 'artifacts', 'page');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// TOOLCHAIN.md: as root, and without the networking flags it keeps trying to reach the internet.
const FLAGS = ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const LOAD_TIMEOUT = 60_000;

/** scripts/serve.mjs when the checkout has it, otherwise a minimal server with the same mounts. */
async function serve() {
  const script = join(root, 'scripts', 'serve.mjs');
  if (await exists(script)) {
    const { startServer } = await import(pathToFileURL(script).href);
    if (typeof startServer === 'function') {
      const { server, url } = await startServer({ port: 0, quiet: true });
      return { url, close: () => closeServer(server) };
    }
  }
  return inlineServer();
}

async function inlineServer() {
  const mounts = [['/pkg/', join(root, 'pkg')], ['/', join(root, 'www')]];
  const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png' };
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const [prefix, dir] = mounts.find(([p]) => path.startsWith(p));
    let file = resolve(dir, `.${sep}${path.slice(prefix.length)}`);
    try {
      if (!file.startsWith(dir)) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      await access(file);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => closeServer(server) };
}

function closeServer(server) {
  server.closeAllConnections?.();
  return new Promise((ok) => server.close(() => ok()));
}

async function exists(path) {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

let server;
let context;
let profile;

before(async () => {
  assert.ok(await exists(join(root, 'pkg', 'index.js')), 'pkg/index.js is missing: build the package first (make build)');
  await mkdir(artifacts, { recursive: true });
  server = await serve();
  const { chromium } = await import('playwright-core').catch((e) => {
    throw new Error('playwright-core is not installed: run `make setup` (playwright-core comes from the root package.json)', { cause: e });
  });
  profile = await mkdtemp(join(tmpdir(), 'ctxguard-page-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1360, height: 900 },
  });
});

async function cleanUp() {
  await context?.close().catch(() => {});
  await server?.close().catch(() => {});
  if (profile) await rm(profile, { recursive: true, force: true });
}

after(cleanUp);
// Interrupted (Ctrl-C, a CI timeout): still close the browser and remove its profile.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => cleanUp().finally(() => process.exit(130)));
}

/**
 * A fresh page with every page error, console error and failed request recorded.
 * `page.problems` lists them; `expectClean(page)` fails the test if there are any.
 */
async function openPage({ before: prepare } = {}) {
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push(`console.error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  if (prepare) await prepare(page);
  await page.goto(server.url);
  return page;
}

function expectClean(page) {
  assert.deepEqual(page.problems, [], 'the page reported errors');
}

async function ready(page) {
  await page.waitForFunction(() => ['ready', 'error', 'fatal'].includes(document.documentElement.dataset.status), null, { timeout: LOAD_TIMEOUT });
  const status = await page.evaluate(() => document.documentElement.dataset.status);
  if (status !== 'ready') {
    const text = await page.evaluate(() => (document.querySelector('#error:not([hidden]), #fatal:not([hidden])') ?? document.body).innerText);
    assert.fail(`page status is ${status}: ${text}`);
  }
}

/** Run `action` and wait until the page has finished the measuring pass it triggers. */
async function after1(page, action) {
  const passes = await page.evaluate(() => Number(document.documentElement.dataset.passes ?? 0));
  await action();
  await page.waitForFunction((n) => Number(document.documentElement.dataset.passes ?? 0) > n, passes, { timeout: 10_000 });
  return page.evaluate(() => document.documentElement.dataset.status);
}

const digits = (s) => Number(String(s).replace(/[^\d]/g, ''));
const text = (page, sel) => page.locator(sel).innerText();

/** What ctxguard itself says about the sample in this page, for `model`. */
function measureSample(page, config) {
  return page.evaluate(async (cfg) => {
    const { ContextGuard } = await import('/pkg/index.js');
    const { sample } = await import('/sample.js');
    const guard = new ContextGuard({ format: 'openai', ...cfg });
    try {
      return guard.measure(sample.messages, { tools: sample.tools });
    } finally {
      guard.free();
    }
  }, config);
}

async function shot(page, name) {
  // From the top: a full-page capture of a scrolled page draws the sticky error box mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

describe('demo page', () => {
  test('measures the built-in sample and shows what ContextGuard.measure returns', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.equal(await page.locator('#model').inputValue(), 'gpt-4o');
      const expected = await measureSample(page, { model: 'gpt-4o' });

      assert.equal(digits(await text(page, '#used-tokens')), expected.usedTokens);
      assert.equal(digits(await text(page, '#usable-limit')), expected.usableLimit);
      assert.equal(await page.locator('#state').getAttribute('data-state'), expected.state);
      const label = { ok: 'OK', near_trigger: 'Near trigger', over_trigger: 'Over trigger', over_limit: 'Over limit' }[expected.state];
      assert.match(await text(page, '#state'), new RegExp(`^\\W*${label}`));

      // Breakdown: one row per source, each with its number, adding up to the used tokens.
      const rows = await page.locator('table.breakdown tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({ source: tr.dataset.source, tokens: tr.querySelector('td.num').textContent })));
      assert.deepEqual(rows.map((r) => r.source), ['system', 'toolDefinitions', 'user', 'assistant', 'toolOutputs', 'attachments', 'images', 'summary', 'framing']);
      for (const r of rows) {
        assert.match(r.tokens, /^\d[\d,]*$/, `breakdown row ${r.source}`);
        assert.equal(digits(r.tokens), expected.breakdown[r.source], `breakdown row ${r.source}`);
      }
      assert.equal(rows.reduce((sum, r) => sum + digits(r.tokens), 0), expected.usedTokens);
      for (const source of ['system', 'toolDefinitions', 'user', 'assistant', 'toolOutputs', 'attachments', 'images']) {
        assert.ok(expected.breakdown[source] > 0, `the sample has ${source}`);
      }

      assert.equal(await text(page, '#count-kind'), 'Exact');
      assert.match(await text(page, '#encoding'), /o200k_base/);
      assert.equal(digits(await text(page, '#message-count')), expected.messageCount);

      // Raw view: one row per message, each with its count.
      const counts = await page.locator('#messages .msg-tokens .num').allInnerTexts();
      assert.equal(counts.length, 9);
      for (const c of counts) assert.ok(digits(c) > 0, `per-message count ${c}`);

      await shot(page, 'sample-light');
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'sample-dark');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('switching to a cl100k model and to a Claude model changes the encoding and the count kind', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.equal(await after1(page, () => page.selectOption('#model', 'gpt-4')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Exact');
      assert.match(await text(page, '#encoding'), /cl100k_base/);
      // gpt-4's 8k window cannot hold the sample.
      const gpt4 = await measureSample(page, { model: 'gpt-4' });
      assert.equal(digits(await text(page, '#used-tokens')), gpt4.usedTokens);
      assert.equal(await page.locator('#state').getAttribute('data-state'), gpt4.state);
      await shot(page, 'model-gpt-4');

      assert.equal(await after1(page, () => page.selectOption('#model', 'claude-sonnet-4')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Estimate');
      assert.match(await text(page, '#encoding'), /o200k_base × \d\.\d\d/);
      const claude = await measureSample(page, { model: 'claude-sonnet-4' });
      assert.equal(claude.kind, 'estimate');
      assert.equal(digits(await text(page, '#used-tokens')), claude.usedTokens);
      await shot(page, 'model-claude');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('custom limits recompute the budget, and impossible ones show their error code', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const used = digits(await text(page, '#used-tokens'));
      assert.equal(await after1(page, () => page.fill('#limit-economicBudget', String(Math.floor(used / 2)))), 'ready');
      assert.equal(digits(await text(page, '#usable-limit')), Math.floor(used / 2));
      assert.equal(await page.locator('#state').getAttribute('data-state'), 'over_limit');
      assert.match(await text(page, '#state'), /Over limit/);
      await shot(page, 'economic-budget');

      assert.equal(await after1(page, () => page.fill('#limit-reservedOutputTokens', '999999999')), 'error');
      assert.equal(await text(page, '#error-code'), 'INVALID_BUDGET');
      assert.ok(await page.locator('#limits-error').isVisible());
      assert.equal(await after1(page, () => page.click('#reset-limits')), 'ready');
      assert.equal(digits(await text(page, '#used-tokens')), used);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('a malformed conversation shows an error with its code, never a blank page', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const used = await text(page, '#used-tokens');
      const cases = [
        ['[{"role": "wizard", "content": "hi"}]', 'INVALID_ROLE'],
        ['{"messages": "not a list"}', 'INVALID_MESSAGES'],
        ['[{"role": "user", "content": "unclosed', 'INVALID_JSON'],
      ];
      for (const [input, code] of cases) {
        assert.equal(await after1(page, () => page.fill('#conversation', input)), 'error', input);
        assert.ok(await page.locator('#error').isVisible(), input);
        assert.equal(await text(page, '#error-code'), code, input);
        assert.ok((await text(page, '#error-message')).length > 0, input);
        assert.match(await text(page, '#conversation-error'), new RegExp(code));
        // The last valid figures stay on screen, marked stale.
        assert.equal(await text(page, '#used-tokens'), used);
        if (code === 'INVALID_ROLE') await shot(page, 'malformed');
      }
      assert.equal(await after1(page, () => page.click('#use-sample')), 'ready');
      assert.ok(await page.locator('#error').isHidden());
      assert.equal(await text(page, '#used-tokens'), used);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('an Anthropic conversation loaded from a file is measured with one row per tool result', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const request = {
        system: 'You are a terse assistant.',
        messages: [
          { role: 'user', content: 'What does README.md say?' },
          { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'README.md' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '# Demo\nA small demo project.' }, { type: 'text', text: 'Summarize it in one line.' }] },
        ],
        tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
      };
      await page.selectOption('#model', 'claude-sonnet-4');
      const status = await after1(page, () =>
        page.setInputFiles('#file', { name: 'anthropic.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(request)) }));
      assert.equal(status, 'ready', await text(page, '#results'));
      assert.equal(await page.locator('#format').inputValue(), 'anthropic');
      const expected = await page.evaluate(async (req) => {
        const { ContextGuard } = await import('/pkg/index.js');
        const guard = new ContextGuard({ model: 'claude-sonnet-4', format: 'anthropic' });
        return guard.measure(req.messages, { system: req.system, tools: req.tools });
      }, request);
      assert.equal(digits(await text(page, '#used-tokens')), expected.usedTokens);
      const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
      assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'user']);
      assert.equal(await page.locator('#messages .msg-tokens .num').count(), 5);
      assert.equal(await page.locator('#messages-card .notice').count(), 0);
      await shot(page, 'anthropic-file');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('without WebAssembly, or without the package, the page says so', async () => {
    const noWasm = await openPage({ before: (p) => p.addInitScript(() => { delete globalThis.WebAssembly; }) });
    try {
      await noWasm.waitForFunction(() => document.documentElement.dataset.status === 'fatal', null, { timeout: LOAD_TIMEOUT });
      assert.match(await text(noWasm, '#fatal'), /WebAssembly is not available/);
      assert.ok(await noWasm.locator('#app').isHidden());
      await shot(noWasm, 'no-webassembly');
      expectClean(noWasm);
    } finally {
      await noWasm.close();
    }

    const noPkg = await openPage({ before: (p) => p.route('**/pkg/index.js', (r) => r.fulfill({ status: 404, body: 'not found' })) });
    try {
      await noPkg.waitForFunction(() => document.documentElement.dataset.status === 'fatal', null, { timeout: LOAD_TIMEOUT });
      assert.match(await text(noPkg, '#fatal'), /ctxguard could not be loaded/);
      await shot(noPkg, 'no-package');
      // The failed module request is the one expected problem.
      assert.ok(noPkg.problems.every((p) => /404|pkg\/index\.js/.test(p)), noPkg.problems.join('\n'));
    } finally {
      await noPkg.close();
    }
  });
});
