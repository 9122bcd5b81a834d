// The measuring phases, run by run.mjs: cold start, memory, throughput, ctxguard's conversation
// APIs and download size, in Node and in Chromium.

import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';

import { NodeWorker, PageWorker, TimeoutError } from './workers.mjs';
import { median } from './measure.mjs';

const LIB_DIR = path.dirname(new URL(import.meta.url).pathname);
const adaptersUrl = pathToFileURL(path.join(LIB_DIR, 'adapters.mjs')).href;
const measureUrl = pathToFileURL(path.join(LIB_DIR, 'measure.mjs')).href;

export function progress(...args) {
  const t = ((performance.now() / 1000) | 0).toString().padStart(4);
  process.stderr.write(`[${t}s] ${args.join(' ')}\n`);
}

function runNode(args, { cwd, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

function parseLastJson(r) {
  const line = r.out.trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: `exit ${r.code ?? r.signal}: ${(r.err || r.out).trim().slice(-600)}` };
  }
}

// ------------------------------------------------------------------ cold start

/** Node: a fresh `node -e` per sample; time from before the first import to after the first count. */
export async function coldNode({ libs, encodings, samples, env, cwd }) {
  const out = {};
  for (let s = 0; s < samples; s++) {
    for (const lib of libs) {
      for (const enc of encodings) {
        const script = `
const h0 = performance.now();
const { loadCounter } = await import(${JSON.stringify(adaptersUrl)});
const { SAMPLE } = await import(${JSON.stringify(measureUrl)});
const t0 = performance.now();
const c = await loadCounter(${JSON.stringify(lib)}, ${JSON.stringify(enc)}, ${JSON.stringify(env)});
const count = c.count(SAMPLE);
const ms = performance.now() - t0;
console.log(JSON.stringify({ ms, harnessMs: t0 - h0, count, sinceProcessStart: performance.now() }));`;
        const r = parseLastJson(await runNode(['--input-type=module', '-e', script], { cwd, timeoutMs: 60_000 }));
        const cell = (((out[lib] ??= {})[enc]) ??= { samples: [], harnessMs: [], sinceProcessStart: [], counts: [], errors: [] });
        if (r.error) cell.errors.push(r.error);
        else {
          cell.samples.push(r.ms);
          cell.harnessMs.push(r.harnessMs);
          cell.sinceProcessStart.push(r.sinceProcessStart);
          cell.counts.push(r.count);
        }
      }
    }
    progress(`node cold start: sample ${s + 1}/${samples}`);
  }
  return out;
}

/** Chromium: a new context and page per sample; time from the library's import to after its first count (and since navigation start; the harness's own modules load before the clock starts, `harnessMs`). */
export async function coldChromium({ browser, server, libs, encodings, samples, env }) {
  const out = {};
  for (let s = 0; s < samples; s++) {
    for (const lib of libs) {
      for (const enc of encodings) {
        const cell = (((out[lib] ??= {})[enc]) ??= { samples: [], harnessMs: [], sinceNavigation: [], counts: [], errors: [], fetched: null });
        const b = await browser.get();
        const context = await b.newContext();
        try {
          const page = await context.newPage();
          server.log.length = 0;
          const url = `${server.url}/cold.html?lib=${encodeURIComponent(lib)}&enc=${enc}&env=${encodeURIComponent(JSON.stringify(env))}`;
          await page.goto(url, { waitUntil: 'commit' });
          await page.waitForFunction(() => window.coldResult, null, { timeout: 60_000 });
          const r = await page.evaluate(() => window.coldResult);
          if (r.error) cell.errors.push(r.error);
          else {
            cell.samples.push(r.ms);
            cell.harnessMs.push(r.harnessMs);
            cell.sinceNavigation.push(r.sinceNavigation);
            cell.counts.push(r.count);
          }
          if (!cell.fetched) cell.fetched = server.log.map((e) => ({ ...e }));
        } catch (e) {
          cell.errors.push(String(e.message || e));
        } finally {
          await context.close().catch(() => {});
        }
      }
    }
    progress(`chromium cold start: sample ${s + 1}/${samples}`);
  }
  return out;
}

// ------------------------------------------------------------------ memory (Node)

/**
 * A fresh process per sample: memory after loading one encoding and counting once, the same 0.5 s
 * later (memory held: a wasm function the first count made hot is compiled again by V8's optimizing
 * tier on a background thread, whose working memory shows in RSS until it finishes), then after
 * 1 MB of prose.
 */
export async function memoryNode({ libs, encodings, samples, env, cwd, prosePath }) {
  const out = {};
  for (let s = 0; s < samples; s++) {
    for (const lib of libs) {
      for (const enc of encodings) {
        const script = `
import fs from 'node:fs';
const { loadCounter } = await import(${JSON.stringify(adaptersUrl)});
const { SAMPLE } = await import(${JSON.stringify(measureUrl)});
const prose = fs.readFileSync(${JSON.stringify(prosePath)}, 'utf8');
const snap = () => { gc(); gc(); const m = process.memoryUsage(); return { rss: m.rss, js: m.heapUsed + m.external + m.arrayBuffers, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }; };
const d = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));
const base = snap();
const c = await loadCounter(${JSON.stringify(lib)}, ${JSON.stringify(enc)}, ${JSON.stringify(env)});
c.count(SAMPLE);
const one = snap();
await new Promise((resolve) => setTimeout(resolve, 500));
const held = snap();
c.count(prose);
const two = snap();
console.log(JSON.stringify({ afterFirst: d(base, one), held: d(base, held), afterProse: d(base, two) }));`;
        const r = parseLastJson(await runNode(['--expose-gc', '--input-type=module', '-e', script], { cwd, timeoutMs: 120_000 }));
        const cell = (((out[lib] ??= {})[enc]) ??= { samples: [], errors: [] });
        if (r.error) cell.errors.push(r.error);
        else cell.samples.push(r);
      }
    }
    progress(`node memory: sample ${s + 1}/${samples}`);
  }
  return out;
}

// ------------------------------------------------------------------ throughput

const REF = 'gpt-tokenizer';

/**
 * One pair of libraries (the reference and one other) over the inputs, in one process or page, so
 * that their runs interleave and the ratio between them sees the same machine load. For each input:
 * each library first counts variant 0 (the warm-up; it must finish within `capMs`, or the
 * process/page is killed, the input is reported as over the cap for that library, and a fresh
 * process/page takes over). Then up to `runs` rounds, round r counting variant r+1 — text of the same
 * kind the tokenizer has not seen — alternating which library goes first, each library stopping when
 * its next run would pass `budgetMs`. Last, the last variant is counted again ("again": text just
 * seen, where per-piece caches shine). Every count is kept for the agreement check.
 * `known` holds the reference's results from an earlier pair: an input on which it was over the cap
 * or slower than the budget is not measured again.
 */
export async function throughputPair({ start, libs, encoding, ids, env, manifest, params, known }) {
  const res = { libs: Object.fromEntries(libs.map((l) => [l, { inputs: {}, loadMs: [] }])), ratios: {} };
  const variants = params.runs + 1;
  let w = null;
  const ensure = async (i) => {
    if (w) return;
    w = await start();
    const init = await w.call('init', [{ libs, encoding, ids: ids.slice(i), env, manifest, variants }], 300_000);
    for (const l of libs) res.libs[l].loadMs.push(init.loadMs[l]);
  };
  const drop = async () => {
    await w?.kill();
    w = null;
  };
  const errText = (e) => String(e.message || e).slice(0, 300);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const bytesOf = (v) => manifest.files[id].variants[v].bytes;
    const record = (cell, v, r) => {
      cell.counts[v] = r.count;
      if (r.fingerprint) cell.fingerprints[v] = r.fingerprint;
    };
    const active = [];
    for (const lib of libs) {
      const prior = lib === REF ? known?.[id] : null;
      if (prior && (prior.capped || prior.onlyFirst || prior.error)) {
        res.libs[lib].inputs[id] = { ...prior, reused: true };
        continue;
      }
      try {
        await ensure(i);
      } catch (e) {
        res.libs[lib].inputs[id] = { error: `init: ${errText(e)}` };
        await drop();
        continue;
      }
      const tFirst = performance.now();
      try {
        const r = await w.call('run', [lib, id, 0], params.capMs);
        const cell = { count: r.count, counts: {}, fingerprints: {}, firstMs: r.ms, samples: [], again: [] };
        record(cell, 0, r);
        res.libs[lib].inputs[id] = cell;
        if (r.ms > params.budgetMs) Object.assign(cell, { samples: [{ v: 0, ms: r.ms, mbps: bytesOf(0) / 1e3 / r.ms }], onlyFirst: true });
        else active.push(lib);
      } catch (e) {
        res.libs[lib].inputs[id] = e instanceof TimeoutError
          ? { capped: true, capMs: params.capMs }
          : { error: errText(e), errorAfterMs: performance.now() - tFirst };
        await drop();
      }
    }
    const spent = Object.fromEntries(active.map((l) => [l, 0]));
    const ratios = [];
    for (let r = 0; r < params.runs && active.length; r++) {
      const v = r + 1;
      const order = r % 2 ? [...active].reverse() : [...active];
      const round = {};
      for (const lib of order) {
        const cell = res.libs[lib].inputs[id];
        const last = cell.samples.at(-1)?.ms ?? cell.firstMs;
        if (cell.samples.length && spent[lib] + last > params.budgetMs) {
          active.splice(active.indexOf(lib), 1);
          continue;
        }
        try {
          await ensure(i);
          const x = await w.call('run', [lib, id, v], Math.max(5_000, 3 * last) + 30_000);
          cell.samples.push({ v, ms: x.ms, mbps: bytesOf(v) / 1e3 / x.ms });
          record(cell, v, x);
          spent[lib] += x.ms;
          round[lib] = x.ms;
        } catch (e) {
          cell.note = `run: ${errText(e)}`;
          active.splice(active.indexOf(lib), 1);
          await drop();
        }
      }
      // Reference time ÷ the other's time on the same text = the other's speed ÷ the reference's.
      if (libs.length === 2 && round[libs[0]] != null && round[libs[1]] != null) ratios.push(round[libs[0]] / round[libs[1]]);
    }
    // "Again": the last variant counted once more, both libraries interleaved like the rounds.
    const againLibs = [];
    for (const lib of libs) {
      const cell = res.libs[lib].inputs[id];
      if (!cell || cell.capped || cell.error || cell.reused) continue;
      if (!cell.samples.length) Object.assign(cell, { samples: [{ v: 0, ms: cell.firstMs, mbps: bytesOf(0) / 1e3 / cell.firstMs }], onlyFirst: true });
      if (cell.onlyFirst) continue;
      const med = median(cell.samples.map((x) => x.ms));
      const n = med < params.budgetMs / 4 ? 2 : med < params.budgetMs / 2 ? 1 : 0;
      if (n) againLibs.push({ lib, cell, med, n, v: cell.samples.at(-1).v });
    }
    // Both must count the same text for a paired ratio: the last variant both reached.
    if (againLibs.length === 2) {
      const v = Math.min(againLibs[0].v, againLibs[1].v);
      for (const a of againLibs) a.v = v;
    }
    const againRatios = [];
    for (let k = 0; k < Math.max(0, ...againLibs.map((a) => a.n)); k++) {
      const order = k % 2 ? [...againLibs].reverse() : againLibs;
      const round = {};
      for (const a of order) {
        if (k >= a.n) continue;
        try {
          await ensure(i);
          const x = await w.call('run', [a.lib, id, a.v], Math.max(5_000, 3 * a.med) + 30_000);
          a.cell.again.push({ v: a.v, ms: x.ms, mbps: bytesOf(a.v) / 1e3 / x.ms });
          round[a.lib] = x.ms;
        } catch (e) {
          a.cell.note = `again: ${errText(e)}`;
          a.n = 0;
          await drop();
        }
      }
      if (libs.length === 2 && round[libs[0]] != null && round[libs[1]] != null) againRatios.push(round[libs[0]] / round[libs[1]]);
    }
    (res.againRatios ??= {})[id] = againRatios;
    res.ratios[id] = ratios;
  }
  if (w) {
    await w.call('finish', [], 30_000).catch(() => {});
    await drop();
  }
  return res;
}

/**
 * All libraries for one runtime: the reference paired with each other library in turn. Returns
 * `{ [lib]: { [enc]: { inputs, loadMs, ratios } }, pairs }` where `ratios[id]` are the paired
 * per-round speed ratios against the reference (absent for the reference itself).
 */
export async function throughput({ runtime, startWorker, libs, encodings, ids, env, manifest, params }) {
  const out = { pairs: {} };
  const others = libs.filter((l) => l !== REF);
  for (const enc of encodings) {
    let refCells = null;
    for (const lib of others.length ? others : [REF]) {
      const t0 = performance.now();
      // A library an order of magnitude slower than the reference is not paired: the load noise the
      // pairing removes is far smaller than the gap, and its rounds would cost minutes.
      const pairLibs = lib === REF ? [REF] : params.solo?.includes(lib) && refCells ? [lib] : [REF, lib];
      const r = await throughputPair({ start: startWorker, libs: pairLibs, encoding: enc, ids, env, manifest, params, known: refCells });
      ((out.pairs[enc] ??= {})[lib]) = r;
      if (!refCells && r.libs[REF]) {
        refCells = r.libs[REF].inputs;
        (out[REF] ??= {})[enc] = { inputs: refCells, loadMs: r.libs[REF].loadMs };
      }
      if (lib !== REF) (out[lib] ??= {})[enc] = { inputs: r.libs[lib].inputs, loadMs: r.libs[lib].loadMs, ratios: r.ratios, againRatios: r.againRatios };
      const summary = ids.map((id) => pairLibs.map((l) => {
        const c = r.libs[l].inputs[id] ?? {};
        return c.capped ? '>cap' : c.error ? 'error' : c.reused ? 'reused' : String(c.samples?.length ?? 0);
      }).join('/') + ` ${id}`);
      progress(`${runtime} throughput ${pairLibs.join(' + ')} ${enc} (${((performance.now() - t0) / 1000).toFixed(1)} s): ${summary.join(', ')}`);
    }
  }
  return out;
}

// ------------------------------------------------------------------ ctxguard against hypertok

/**
 * ctxguard and hypertok side by side in one process (Node) or page (Chromium), per input and
 * encoding, in the three regimes a cache makes different (hypertok keeps every piece it has seen,
 * for the life of the tokenizer; ctxguard keeps a bounded cache of recent pieces):
 * - `first`: a fresh process or page — both libraries just loaded, one short warm-up count each —
 *   counts variant 0: first sight, every cache empty; `samples` fresh processes, alternating which
 *   library counts first;
 * - `unseen`: in the last of those processes, rounds over variants 1, 2, … (text of the same kind not
 *   seen yet, as a chat client meets new messages), alternating which goes first;
 * - `again`: the last variant counted again (`againRuns` times, alternating): the same text just
 *   counted — the regime of hypertok's published figures.
 * A ratio is ctxguard's speed ÷ hypertok's on the same text, in the same process: per sample for
 * `first`, per round otherwise. Every count is kept for the agreement check.
 */
export async function versus({ runtime, startWorker, encodings, ids, env, manifest, params }) {
  const libs = ['ctxguard', 'hypertok'];
  const out = {};
  const errText = (e) => String(e.message || e).slice(0, 300);
  for (const enc of encodings) {
    for (const id of ids) {
      const bytesOf = (v) => manifest.files[id].variants[v].bytes;
      const cell = { libs: Object.fromEntries(libs.map((l) => [l, { first: [], unseen: [], again: [], counts: {}, fingerprints: {} }])), ratios: { first: [], unseen: [], again: [] }, errors: [] };
      ((out[enc] ??= {})[id]) = cell;
      const record = (lib, v, r) => {
        const c = cell.libs[lib];
        if (c.counts[v] !== undefined && c.counts[v] !== r.count) cell.errors.push(`${lib} counted variant ${v} differently twice`);
        c.counts[v] = r.count;
        if (r.fingerprint) c.fingerprints[v] = r.fingerprint;
      };
      const samples = params.versusSamples ?? 1;
      for (let s = 0; s < samples; s++) {
        let w;
        const last = s === samples - 1;
        try {
          w = await startWorker();
          await w.call('init', [{ libs, encoding: enc, ids: [id], env, manifest, variants: last ? params.runs + 1 : 1 }], 300_000);
          const order = s % 2 ? [...libs].reverse() : libs;
          const round = {};
          for (const lib of order) {
            const r = await w.call('run', [lib, id, 0], params.capMs);
            cell.libs[lib].first.push({ ms: r.ms, mbps: bytesOf(0) / 1e3 / r.ms });
            record(lib, 0, r);
            round[lib] = r.ms;
          }
          cell.ratios.first.push(round.hypertok / round.ctxguard);
          if (!last) continue;
          const spent = { ctxguard: 0, hypertok: 0 };
          let v = 0;
          for (let k = 0; k < params.runs; k++) {
            if (libs.some((l) => spent[l] > params.budgetMs)) break;
            v = k + 1;
            const rr = {};
            for (const lib of k % 2 ? [...libs].reverse() : libs) {
              const r = await w.call('run', [lib, id, v], params.capMs);
              cell.libs[lib].unseen.push({ v, ms: r.ms, mbps: bytesOf(v) / 1e3 / r.ms });
              record(lib, v, r);
              spent[lib] += r.ms;
              rr[lib] = r.ms;
            }
            cell.ratios.unseen.push(rr.hypertok / rr.ctxguard);
          }
          for (let k = 0; k < (params.againRuns ?? 3); k++) {
            const rr = {};
            for (const lib of k % 2 ? [...libs].reverse() : libs) {
              const r = await w.call('run', [lib, id, v], params.capMs);
              cell.libs[lib].again.push({ v, ms: r.ms, mbps: bytesOf(v) / 1e3 / r.ms });
              record(lib, v, r);
              rr[lib] = r.ms;
            }
            cell.ratios.again.push(rr.hypertok / rr.ctxguard);
          }
        } catch (e) {
          cell.errors.push(e instanceof TimeoutError ? `over the ${params.capMs / 1000} s cap` : errText(e));
        } finally {
          await w?.kill();
        }
      }
      const agree = Object.entries(cell.libs.ctxguard.counts).every(([v, n]) => cell.libs.hypertok.counts[v] === undefined || cell.libs.hypertok.counts[v] === n);
      if (!agree) cell.errors.push('counts differ');
      const r = (k) => (cell.ratios[k].length ? median(cell.ratios[k]).toFixed(2) : '—');
      progress(`${runtime} ctxguard ÷ hypertok ${enc} ${id}: first ${r('first')}, unseen ${r('unseen')}, again ${r('again')}${cell.errors.length ? ` (${cell.errors.join('; ')})` : ''}`);
    }
  }
  return out;
}

// ------------------------------------------------------------------ ctxguard's conversation APIs

/**
 * ctxguard's conversation APIs, `params.extrasSamples` fresh processes/pages per encoding and kind
 * (alternating the kinds): the first sample's figures, plus every sample's first call ÷ baseline
 * in `coldRatios` (the from-cold figure is their median: one sample on a shared machine is noise),
 * and for the guard the unseen conversation's ratio, code warm, in `unseenRatios`.
 * A sample that fails is listed in `errors` (the others are kept); `error` is set only when the
 * API is broken (the call itself returned an error), and then no further sample is taken.
 */
export async function chatExtras({ runtime, startWorker, encodings, env, manifest, params }) {
  const out = {};
  for (const enc of encodings) {
    for (let s = 0; s < (params.extrasSamples ?? 1); s++) {
      for (const kind of ['countMessages', 'guard']) {
        if (out[enc]?.[kind]?.error) continue;
        let w;
        try {
          w = await startWorker();
          const r = await w.call('chatExtras', [{ kind, encoding: enc, env, manifest, runs: params.extrasRuns, budgetMs: params.budgetMs }], 180_000);
          const first = ((out[enc] ??= {})[kind] ??= { ...r, coldRatios: [], unseenRatios: [], errors: [] });
          if (r.error) Object.assign(first, { error: r.error });
          else if (r.available) {
            first.coldRatios.push(r.coldMs / r.baselineMs);
            if (r.unseenMs !== undefined) first.unseenRatios.push(r.unseenMs / r.unseenBaselineMs);
          }
        } catch (e) {
          // A process or page that died or timed out: noted, the samples taken so far are kept.
          const cell = ((out[enc] ??= {})[kind] ??= { kind, available: null, coldRatios: [], unseenRatios: [], errors: [] });
          cell.errors.push(String(e.message || e).slice(0, 500));
        } finally {
          await w?.kill();
        }
      }
    }
    progress(`${runtime} ctxguard conversation APIs ${enc}: ${JSON.stringify(Object.fromEntries(Object.entries(out[enc]).map(([k, v]) => [k, v.available ? 'ok' : v.error ? 'error' : 'n/a'])))}`);
  }
  return out;
}

export const nodeStarter = (inputsDir) => () => NodeWorker.start(inputsDir);
export const pageStarter = (browser, server) => () => PageWorker.start(browser, `${server.url}/bench.html`);

// ------------------------------------------------------------------ download size

/** Brotli at its highest quality (11, default 4 MB window): what CDNs such as jsDelivr serve. */
const brotli = (body) => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

/**
 * gzip -9 (the figure the download target uses) and brotli 11 of each file the cold-start page
 * fetched of the libraries' bundles and their assets (not the harness).
 */
export function downloadSizes(coldChromiumResult) {
  const out = {};
  // The same file serves several cells (ctxguard's bundle and .wasm for both encodings, tiktoken's
  // .wasm): compressed once (brotli 11 takes seconds a megabyte).
  const sizes = new Map();
  const sizesOf = (file) => {
    const body = fs.readFileSync(file);
    const key = crypto.createHash('sha1').update(body).digest('hex');
    if (!sizes.has(key)) sizes.set(key, { raw: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length, brotli: brotli(body) });
    return sizes.get(key);
  };
  for (const [lib, byEnc] of Object.entries(coldChromiumResult)) {
    for (const [enc, cell] of Object.entries(byEnc)) {
      if (!cell.fetched) continue;
      const files = [];
      for (const e of cell.fetched) {
        if (!e.path.startsWith('/bundles/') || e.status !== 200) continue;
        files.push({ path: e.path, ...sizesOf(e.file) });
      }
      (out[lib] ??= {})[enc] = {
        files,
        raw: files.reduce((a, f) => a + f.raw, 0),
        gzip: files.reduce((a, f) => a + f.gzip, 0),
        brotli: files.reduce((a, f) => a + f.brotli, 0),
      };
    }
  }
  return out;
}
