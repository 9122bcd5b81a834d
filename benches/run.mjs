#!/usr/bin/env node
// Side-by-side benchmark of ctxguard against gpt-tokenizer, tiktoken (npm, wasm) and js-tiktoken,
// in Node and in headless Chromium. Prints the tables and writes BENCHMARKS.md (generated section).
// Chromium loads every library, ctxguard included, bundled and minified by rolldown as a production
// page ships it (lib/bundle.mjs, into benches/.bundles/); Node loads the packages as published.
//
//   node benches/run.mjs            full run (~20-40 min on 2 cores), writes BENCHMARKS.md
//   node benches/run.mjs --quick    short run to check the harness (small inputs, few samples);
//                                   writes benches/results/quick.json, not BENCHMARKS.md
// Options: --runtimes node,chromium  --libs ctxguard,gpt-tokenizer,...  --encodings o200k_base,...
//          --inputs prose,code,...  --cap SECONDS  --extras-samples N  --pkg DIR  --no-write  --write (quick run too)
//          --out FILE (default: BENCHMARKS.md at the repository root)
//          --phases cold,memory,throughput,extras,versus   (default: all; `versus` is ctxguard against
//                      hypertok in three regimes, see phases.mjs)
//          --rerender  write the report of benches/results/latest.json again (no measuring)
//          --results FILE  where the raw results go (default results/latest.json, quick.json for --quick)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

import { ensureInputs, INPUTS } from './lib/inputs.mjs';
import { LIBS, ENCODINGS } from './lib/adapters.mjs';
import { startServer } from './lib/server.mjs';
import { bundleAll, BUNDLER } from './lib/bundle.mjs';
import { Browser } from './lib/workers.mjs';
import * as P from './lib/phases.mjs';
import { renderMarkdown } from './lib/report.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const BEGIN = '<!-- BEGIN GENERATED: node benches/run.mjs overwrites everything between these markers -->';
const END = '<!-- END GENERATED -->';

// ------------------------------------------------------------------ options

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[i + 1] : def;
};
const list = (name, all) => {
  const v = opt(name, null);
  if (!v) return all;
  const want = v.split(',');
  for (const w of want) if (!all.includes(w)) throw new Error(`--${name}: unknown "${w}" (known: ${all.join(', ')})`);
  return all.filter((x) => want.includes(x));
};

const quick = flag('quick');
const params = quick
  ? { runs: 2, budgetMs: 1000, capMs: 2000, coldNode: 2, coldChromium: 1, memSamples: 1, extrasRuns: 3, extrasSamples: 1, versusSamples: 1, againRuns: 2, solo: ['js-tiktoken'] }
  : { runs: 5, budgetMs: 4000, capMs: 20000, coldNode: 7, coldChromium: 5, memSamples: 5, extrasRuns: 10, extrasSamples: 5, versusSamples: 3, againRuns: 3, solo: ['js-tiktoken'] };
if (opt('cap', null)) params.capMs = Number(opt('cap')) * 1000;
if (opt('extras-samples', null)) {
  params.extrasSamples = Number(opt('extras-samples'));
  if (!Number.isInteger(params.extrasSamples) || params.extrasSamples < 1) throw new Error('--extras-samples: a whole number >= 1');
}
const PHASES = ['cold', 'memory', 'throughput', 'extras', 'versus'];
const phases = list('phases', PHASES);
const selection = {
  phases,
  runtimes: list('runtimes', ['node', 'chromium']),
  libs: list('libs', LIBS),
  encodings: list('encodings', ENCODINGS),
  ids: list('inputs', INPUTS.map((x) => x.id)),
};
// The reference must be measured for the ratios (of every phase but `versus`).
if (phases.some((p) => p !== 'versus') && !selection.libs.includes('gpt-tokenizer')) selection.libs.push('gpt-tokenizer');
const versusOn = phases.includes('versus') && selection.libs.includes('ctxguard') && selection.libs.includes('hypertok');
const pkgDir = path.resolve(opt('pkg', path.join(ROOT, 'pkg')));
const outFile = path.resolve(opt('out', path.join(ROOT, 'BENCHMARKS.md')));
const write = flag('write') || (!quick && !flag('no-write'));

/** BENCHMARKS.md's generated section replaced by `md` (appended when the markers are missing). */
function writeReport(md) {
  let doc = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : '';
  const section = `${BEGIN}\n\n${md}\n${END}\n`;
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) doc = doc.slice(0, a) + section + doc.slice(b + END.length).replace(/^\n/, '');
  else doc = (doc || '# Benchmarks\n\n') + (doc.endsWith('\n\n') || !doc ? '' : '\n') + section;
  fs.writeFileSync(outFile, doc);
}

// --rerender: the report of the last full run (results/latest.json) written again, after a change
// of the report's wording; nothing is measured.
if (flag('rerender')) {
  writeReport(renderMarkdown(JSON.parse(fs.readFileSync(path.join(BENCH_DIR, 'results', 'latest.json'), 'utf8'))));
  process.stderr.write(`benches/run.mjs: ${path.relative(ROOT, outFile)} re-rendered from results/latest.json\n`);
  process.exit(0);
}

// ------------------------------------------------------------------ environment

function fail(msg) {
  process.stderr.write(`benches/run.mjs: ${msg}\n`);
  process.exit(2);
}

if (!fs.existsSync(path.join(BENCH_DIR, 'node_modules', 'gpt-tokenizer', 'package.json'))) {
  // The peers and playwright-core, at the versions in benches/package-lock.json.
  process.stderr.write('benches/run.mjs: installing the peers (npm ci in benches/) …\n');
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: BENCH_DIR, stdio: 'inherit' });
  } catch {
    fail('`npm ci` in benches/ failed');
  }
}

/** How to load ctxguard's package in each runtime (the helper-built entries when present). */
function ctxguardEnv() {
  const has = (f) => fs.existsSync(path.join(pkgDir, f));
  if (!fs.existsSync(pkgDir)) fail(`no built package at ${pkgDir}: build it first (scripts/build-pkg.sh, or CTXGUARD_VARIANTS=0 scripts/build-pkg.sh)`);
  const glue = fs.readdirSync(pkgDir).find((f) => f.endsWith('_bg.wasm'))?.replace(/_bg\.wasm$/, '.js');
  if (!glue || !has(glue)) fail(`no wasm-bindgen glue (*_bg.wasm + .js) in ${pkgDir}`);
  const node = has('node.js')
    ? { entry: pathToFileURL(path.join(pkgDir, 'node.js')).href, init: 'none', file: 'node.js' }
    : { entry: pathToFileURL(path.join(pkgDir, glue)).href, init: 'initSync', wasm: path.join(pkgDir, glue.replace(/\.js$/, '_bg.wasm')), file: `${glue} + initSync` };
  // The page imports ctxguard's bundle of this entry (bundle.mjs); `entry` is set once it is built.
  const browser = has('index.js') ? { entry: null, init: 'none', file: 'index.js, bundled' } : { entry: null, init: 'default', file: `${glue} + await init(), bundled` };
  return { node, browser, browserEntryFile: has('index.js') ? 'index.js' : glue, wasm: glue.replace(/\.js$/, '_bg.wasm') };
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const require = createRequire(import.meta.url);
const rolldownVersion = () => JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'rolldown', 'package.json'), 'utf8')).version;
const peerVersion = (name) => JSON.parse(fs.readFileSync(path.join(BENCH_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;

// ------------------------------------------------------------------ run

const t0 = performance.now();
const cg = ctxguardEnv();
const envNode = { runtime: 'node', ctxguard: cg.node };
const inputsDir = path.join(BENCH_DIR, quick ? '.inputs-quick' : '.inputs');
P.progress(`inputs in ${path.relative(ROOT, inputsDir)} …`);
const manifest = ensureInputs(inputsDir, { quick, variants: params.runs + 1 });

const { loadCtxguard } = await import('./lib/adapters.mjs');
const cgMod = await loadCtxguard(envNode);
const wasmStat = fs.statSync(path.join(pkgDir, cg.wasm));
const results = {
  meta: {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    command: `node benches/run.mjs${argv.length ? ' ' + argv.join(' ') : ''}`,
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu: os.cpus()[0]?.model?.trim() ?? '?',
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    chromium: null,
    loadStart: os.loadavg(),
    params,
    selection,
    inputs: manifest,
    peers: Object.fromEntries(['gpt-tokenizer', 'tiktoken', 'js-tiktoken', 'hypertok', '@hypertok/vocab-o200k', '@hypertok/vocab-cl100k', 'playwright-core'].map((n) => [n, peerVersion(n)])),
    ctxguard: {
      version: cgMod.version?.() ?? '?',
      commit: git(['rev-parse', '--short', 'HEAD']) ?? '?',
      dirty: (git(['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock']) ?? '') !== '',
      exports: ['countTokens', 'countMessages', 'ContextGuard'].filter((k) => k in cgMod),
      describe: `package from ${path.relative(ROOT, pkgDir) || '.'}/ (wasm ${(wasmStat.size / 1e6).toFixed(2)} MB, built ${wasmStat.mtime.toISOString()}); Node loads ${cg.node.file}, the page ${cg.browser.file}; exports found: ${['countTokens', 'countMessages', 'ContextGuard'].map((k) => `${k} ${k in cgMod ? 'yes' : 'no'}`).join(', ')}`,
    },
  },
  throughput: {},
  chatExtras: {},
  cold: {},
  memory: {},
  versus: {},
};
{
  // Total o200k tokens of the chat, for the notes.
  const gt = await import('gpt-tokenizer/encoding/o200k_base');
  const { messageTexts } = await import('./lib/measure.mjs');
  const chat = JSON.parse(fs.readFileSync(path.join(inputsDir, manifest.files.chat.file), 'utf8'));
  results.meta.chatTokens = chat.flatMap(messageTexts).reduce((a, s) => a + gt.countTokens(s), 0);
}
const { libs, encodings, ids, runtimes } = selection;
P.progress(`${results.meta.mode} run: ${runtimes.join('+')}, ${libs.join(', ')}; ${encodings.join(', ')}; inputs ${ids.join(', ')}; cap ${params.capMs / 1000} s`);

// The libraries of every phase but `versus` (which is ctxguard and hypertok only).
const peerLibs = phases.some((p) => p !== 'versus') ? libs : [];
const on = (p) => phases.includes(p);

if (runtimes.includes('node')) {
  if (on('cold')) results.cold.node = await P.coldNode({ libs, encodings, samples: params.coldNode, env: envNode, cwd: BENCH_DIR });
  if (on('memory')) results.memory.node = await P.memoryNode({ libs, encodings, samples: params.memSamples, env: envNode, cwd: BENCH_DIR, prosePath: path.join(inputsDir, manifest.files.prose.file) });
  const start = P.nodeStarter(inputsDir);
  if (on('throughput')) results.throughput.node = await P.throughput({ runtime: 'node', startWorker: start, libs: peerLibs, encodings, ids, env: envNode, manifest, params });
  if (on('extras') && libs.includes('ctxguard') && ids.includes('chat')) results.chatExtras.node = await P.chatExtras({ runtime: 'node', startWorker: start, encodings, env: envNode, manifest, params });
  if (versusOn) results.versus.node = await P.versus({ runtime: 'node', startWorker: start, encodings, ids, env: envNode, manifest, params });
}

if (runtimes.includes('chromium')) {
  const { chromium } = require('playwright-core');
  const browser = new Browser({
    chromium,
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  // Every library as a production page ships it: bundled and minified by one bundler (bundle.mjs).
  const bundlesDir = path.join(BENCH_DIR, '.bundles');
  P.progress(`bundling ${libs.join(', ')} with ${BUNDLER.name} …`);
  const bundled = await bundleAll({ outDir: bundlesDir, pkgDir, ctxguardEntry: cg.browserEntryFile, libs, encodings });
  const bundles = Object.fromEntries(Object.entries(bundled).map(([lib, byEnc]) => [lib, Object.fromEntries(Object.entries(byEnc).map(([enc, f]) => [enc, `/bundles/${f}`]))]));
  results.meta.bundler = { ...BUNDLER, version: rolldownVersion() };
  const envBrowser = {
    runtime: 'browser',
    ctxguard: { ...cg.browser, entry: bundles.ctxguard?.[encodings[0]] ?? null },
    bundles,
  };
  const server = await startServer({ dirs: { bundles: bundlesDir, lib: path.join(BENCH_DIR, 'lib'), inputs: inputsDir } });
  try {
    results.meta.chromium = `Chromium ${(await browser.get()).version()}`;
    if (on('cold')) {
      results.cold.chromium = await P.coldChromium({ browser, server, libs, encodings, samples: params.coldChromium, env: envBrowser });
      results.download = P.downloadSizes(results.cold.chromium);
      for (const byEnc of Object.values(results.cold.chromium)) for (const c of Object.values(byEnc)) delete c.fetched;
    }
    const start = P.pageStarter(browser, server);
    if (on('throughput')) results.throughput.chromium = await P.throughput({ runtime: 'chromium', startWorker: start, libs: peerLibs, encodings, ids, env: envBrowser, manifest, params });
    if (on('extras') && libs.includes('ctxguard') && ids.includes('chat')) results.chatExtras.chromium = await P.chatExtras({ runtime: 'chromium', startWorker: start, encodings, env: envBrowser, manifest, params });
    if (versusOn) results.versus.chromium = await P.versus({ runtime: 'chromium', startWorker: start, encodings, ids, env: envBrowser, manifest, params });
  } finally {
    await browser.kill();
    await server.close();
  }
}

results.meta.loadEnd = os.loadavg();
results.meta.durationMs = performance.now() - t0;

// ------------------------------------------------------------------ output

const md = renderMarkdown(results);
process.stdout.write(`\n${md}\n`);
const resultsDir = path.join(BENCH_DIR, 'results');
fs.mkdirSync(resultsDir, { recursive: true });
const jsonFile = opt('results', null) ? path.resolve(opt('results')) : path.join(resultsDir, quick ? 'quick.json' : 'latest.json');
fs.writeFileSync(jsonFile, JSON.stringify(results, null, 1));
P.progress(`raw results: ${path.relative(ROOT, jsonFile)}`);

if (write) {
  writeReport(md);
  P.progress(`wrote ${path.relative(ROOT, outFile)}`);
} else {
  P.progress(`${path.relative(ROOT, outFile)} not written (${quick ? 'quick run; pass --write to write it anyway' : '--no-write'})`);
}
