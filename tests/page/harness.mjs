// The demo page's test harness (tests/page/*.test.mjs): the page served by scripts/serve.mjs,
// Debian's Chromium driven by playwright-core, pages whose errors are recorded, and the helpers
// the tests share. Screenshots go to artifacts/page/.

import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { access, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const artifacts = join(root, 'artifacts', 'page');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Running as root needs --no-sandbox, and without the networking flags it keeps trying to reach the internet.
const FLAGS = ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const LOAD_TIMEOUT = 60_000;

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

/**
 * The page served and a browser: `{ url, context, openPage, close }`. Interrupted runs (Ctrl-C,
 * a CI timeout) still close the browser and remove its profile.
 */
export async function startPage() {
  assert.ok(await exists(join(root, 'pkg', 'index.js')), 'pkg/index.js is missing: build the package first (make build)');
  await mkdir(artifacts, { recursive: true });
  const server = await serve();
  const { chromium } = await import('playwright-core').catch((e) => {
    throw new Error('playwright-core is not installed: run `make setup` (playwright-core comes from the root package.json)', { cause: e });
  });
  const profile = await mkdtemp(join(tmpdir(), 'ctxguard-page-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1360, height: 900 },
  });
  const close = async () => {
    await context?.close().catch(() => {});
    await server?.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => close().finally(() => process.exit(130)));
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
  return { url: server.url, context, openPage, close };
}

export function expectClean(page) {
  assert.deepEqual(page.problems, [], 'the page reported errors');
}

export async function ready(page) {
  await page.waitForFunction(() => ['ready', 'error', 'fatal'].includes(document.documentElement.dataset.status), null, { timeout: LOAD_TIMEOUT });
  const status = await page.evaluate(() => document.documentElement.dataset.status);
  if (status !== 'ready') {
    const text = await page.evaluate(() => (document.querySelector('#error:not([hidden]), #fatal:not([hidden])') ?? document.body).innerText);
    assert.fail(`page status is ${status}: ${text}`);
  }
}

/** Run `action` and wait until the page has finished the measuring pass it triggers. */
export async function after1(page, action) {
  const passes = await page.evaluate(() => Number(document.documentElement.dataset.passes ?? 0));
  await action();
  await page.waitForFunction((n) => Number(document.documentElement.dataset.passes ?? 0) > n, passes, { timeout: 10_000 });
  return page.evaluate(() => document.documentElement.dataset.status);
}

export const digits = (s) => Number(String(s).replace(/[^\d]/g, ''));
export const text = (page, sel) => page.locator(sel).innerText();

/** The source-guard values the page starts with (below ctxguard's defaults, so the sample shows them). */
export const PAGE_GUARDS = { toolOutputLimit: 1000, attachmentBudget: 400, edits: 'trigger' };


/** A full-page screenshot in artifacts/page/. */
export async function shot(page, name) {
  // From the top: a full-page capture of a scrolled page draws the sticky error box mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}
