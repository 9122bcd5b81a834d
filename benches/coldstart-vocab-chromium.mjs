// Cold start of the ctxguard package in headless Chromium (issue 7, vocabulary section of
// BENCHMARKS.md): a fresh browser (fresh profile, so no wasm code cache) per sample; the page
// times `import('/pkg/index.js')` (fetch + streaming compile + instantiate) and the first count.
//
//   node benches/coldstart-vocab-chromium.mjs [--runs 5] label=pkgdir [label=pkgdir ...]
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve, extname } from 'node:path';
import { chromium } from 'playwright-core';

const args = process.argv.slice(2);
let runs = 5;
const pkgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else { const [label, dir] = args[i].split('='); pkgs.push({ label, dir: resolve(dir) }); }
}
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const page = (pkg, encoding) => `<!doctype html><script type="module">
const t0 = performance.now();
const api = await import('/${pkg}/index.js');
const t1 = performance.now();
let n = null, error = null;
try { n = api.countTokens('hello world', { encoding: '${encoding}' }); } catch (e) { error = e.code; }
const t2 = performance.now();
window.__result = { n, error, importMs: t1 - t0, firstCountMs: t2 - t1, totalMs: t2 - t0 };
</script>`;
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const [, label, ...rest] = url.pathname.split('/');
  if (label === 'page') {
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end(page(url.searchParams.get('pkg'), url.searchParams.get('enc')));
  }
  const pkg = pkgs.find((p) => p.label === label);
  try {
    const body = readFileSync(pkg.dir + '/' + rest.join('/'));
    res.writeHead(200, { 'content-type': TYPES[extname(req.url)] ?? 'application/octet-stream' });
    res.end(body);
  } catch { res.writeHead(404); res.end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
const samples = {};
let version = '';
for (let r = 0; r < runs; r++) {
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    for (const p of pkgs) {
      const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'] });
      version = browser.version();
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${port}/page?pkg=${p.label}&enc=${encoding}`);
      const s = await tab.waitForFunction(() => window.__result, null, { timeout: 60000 }).then((h) => h.jsonValue());
      await browser.close();
      if (s.error) continue;
      (samples[`${p.label} ${encoding}`] ??= []).push(s);
    }
  }
}
server.close();
console.log(`Chromium ${version} headless, ${runs} fresh browsers per row, medians (min–max of total)`);
console.log('| package | encoding | import ms | first count ms | import + first count ms |\n|---|---|---|---|---|');
for (const [key, ss] of Object.entries(samples)) {
  const [label, enc] = key.split(' ');
  const med = (f) => median(ss.map(f)).toFixed(1);
  const tot = ss.map((s) => s.totalMs);
  console.log(`| ${label} | ${enc} | ${med((s) => s.importMs)} | ${med((s) => s.firstCountMs)} | ${med((s) => s.totalMs)} (${Math.min(...tot).toFixed(0)}–${Math.max(...tot).toFixed(0)}) |`);
}
