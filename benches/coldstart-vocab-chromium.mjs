// Cold start of ctxguard package builds in headless Chromium, side by side with gpt-tokenizer
// (issue 7): a fresh browser (fresh profile, so no wasm code cache) per sample; the page times the
// import of the library's bundle (fetch + compile + instantiate) and the first count.
//
//   node benches/coldstart-vocab-chromium.mjs [--runs 5] [--no-peer] label=pkgdir [label=pkgdir ...]
//
// Every library is loaded as a production page ships it, as in benches/run.mjs: its browser entry
// bundled and minified by rolldown with the same settings for all (benches/lib/bundle.mjs), its
// .wasm a separate file next to the bundle. `--no-peer` leaves gpt-tokenizer out.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join, resolve, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { bundleAll } from './lib/bundle.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let runs = 5;
let peer = true;
const pkgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--no-peer') peer = false;
  else { const [label, dir] = args[i].split('='); pkgs.push({ label, dir: resolve(dir) }); }
}
const ENCODINGS = ['o200k_base', 'cl100k_base'];
const outDir = join(BENCH_DIR, '.bundles', 'coldstart-vocab');
// One bundle directory per label: `<label>/<lib>/...`, as bundle.mjs lays it out.
const rows = [];
for (const p of pkgs) {
  const b = await bundleAll({ outDir: join(outDir, p.label), pkgDir: p.dir, ctxguardEntry: 'index.js', libs: ['ctxguard'], encodings: ENCODINGS });
  rows.push({ label: p.label, lib: 'ctxguard', files: b.ctxguard });
}
if (peer) {
  const b = await bundleAll({ outDir: join(outDir, 'gpt-tokenizer'), pkgDir: null, ctxguardEntry: null, libs: ['gpt-tokenizer'], encodings: ENCODINGS });
  rows.push({ label: 'gpt-tokenizer', lib: 'gpt-tokenizer', files: b['gpt-tokenizer'] });
}
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const page = (url, lib, encoding) => `<!doctype html><script type="module">
const t0 = performance.now();
const api = await import(${JSON.stringify(url)});
const t1 = performance.now();
let n = null, error = null;
try { n = ${lib === 'ctxguard' ? `api.countTokens('hello world', { encoding: '${encoding}' })` : "api.countTokens('hello world')"}; } catch (e) { error = e.code ?? String(e); }
const t2 = performance.now();
window.__result = { n, error, importMs: t1 - t0, firstCountMs: t2 - t1, totalMs: t2 - t0 };
</script>`;
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/page') {
    const row = rows.find((r) => r.label === url.searchParams.get('label'));
    const enc = url.searchParams.get('enc');
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end(page(`/b/${row.label}/${row.files[enc]}`, row.lib, enc));
  }
  const [, b, ...rest] = url.pathname.split('/');
  try {
    if (b !== 'b' || rest.includes('..')) throw new Error('not found');
    const body = readFileSync(join(outDir, ...rest));
    res.writeHead(200, { 'content-type': TYPES[extname(url.pathname)] ?? 'application/octet-stream' });
    res.end(body);
  } catch { res.writeHead(404); res.end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
const samples = {};
let version = '';
for (let r = 0; r < runs; r++) {
  for (const encoding of ENCODINGS) {
    for (const row of rows) {
      const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'] });
      version = browser.version();
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${port}/page?label=${encodeURIComponent(row.label)}&enc=${encoding}`);
      const s = await tab.waitForFunction(() => window.__result, null, { timeout: 60000 }).then((h) => h.jsonValue());
      await browser.close();
      if (s.error) continue; // a build without this encoding
      (samples[`${row.label} ${encoding}`] ??= []).push(s);
    }
  }
}
server.close();
console.log(`Chromium ${version} headless, ${runs} fresh browsers per row, every library bundled by rolldown (benches/lib/bundle.mjs); medians (min–max of total)`);
console.log('| package | encoding | import ms | first count ms | import + first count ms | ÷ gpt-tokenizer |\n|---|---|---|---|---|---|');
for (const [key, ss] of Object.entries(samples)) {
  const [label, enc] = key.split(' ');
  const med = (f) => median(ss.map(f)).toFixed(1);
  const tot = ss.map((s) => s.totalMs);
  const ref = samples[`gpt-tokenizer ${enc}`];
  const rel = ref && label !== 'gpt-tokenizer' ? `${(median(tot) / median(ref.map((s) => s.totalMs))).toFixed(2)}×` : '';
  console.log(`| ${label} | ${enc} | ${med((s) => s.importMs)} | ${med((s) => s.firstCountMs)} | ${med((s) => s.totalMs)} (${Math.min(...tot).toFixed(0)}–${Math.max(...tot).toFixed(0)}) | ${rel} |`);
}
