// Soak benchmark (issue 8, "Long sessions"): 1,000 turns of a growing chat through one
// ContextGuard — user text in several languages, tool calls with logs, JSON and code, pasted
// attachments, file parts and base64 images, periodic compactions through a deterministic
// summarizer, checkpoints stored and resolved with resolveHistory — in Node and in headless
// Chromium. Every N turns it records the wasm linear memory (memoryStats) and the JS heap after a
// full GC, and says whether memory levels off.
//
// Which soak proves what: this one is the host that stores checkpoint chains and archives old
// turns (memory levels off with the live chain, in Node and Chromium, with rich content). The
// host that passes its whole display history, with a summarizer that is slow, fails in bursts,
// hangs and recovers (calls bounded, never a rejection, memory no more than the history costs
// a new guard) is the soak of benches/conversation.mjs (BENCHMARKS.md, "Whole conversations").
//
//   node benches/soak.mjs               1,000 turns in both runtimes; writes the section
//                                       "Long sessions (soak)" of BENCHMARKS.md
//   node benches/soak.mjs --quick       200 turns, a sample every 10 (checks the harness; no write)
//   options: --turns N  --every N  --runtimes node,chromium  --no-write  --write
//            --keep-all  the host never archives old turns (control: the heap must grow; no write)
//
// Needs the built package in pkg/ (make build) and, for Chromium, playwright-core (root
// package.json) and /usr/bin/chromium (CHROMIUM=… to change it). Node is re-run with --expose-gc.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(BENCH, '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const quick = flag('quick');
const TURNS = Number(opt('turns', quick ? 200 : 1000));
const EVERY = Number(opt('every', quick ? 10 : 25));
const RUNTIMES = opt('runtimes', 'node,chromium').split(',');
const keepAll = flag('keep-all');
const write = !keepAll && (flag('write') || (!quick && !flag('no-write') && TURNS >= 1000));
// A window small enough that the conversation compacts every ~60 turns (16 times in 1,000).
const SESSION = {
  config: { model: 'gpt-4o', contextWindow: 100_000, reservedOutputTokens: 4_000, toolOutputLimit: 2_000 },
  seed: 8,
  archive: !keepAll,
};
const MB = (b) => (b / 1048576).toFixed(1);
const log = (...a) => console.error('[soak]', ...a);

const { createSession } = await import(pathToFileURL(path.join(BENCH, 'lib', 'soak-session.mjs')).href);

/** Drives a runtime: `start()`, `advance(n)` → session stats, `sample()` → { wasm, heap } after GC. */
async function soak(name, rt) {
  const samples = [];
  const t0 = performance.now();
  await rt.start();
  samples.push({ turn: 0, ...(await rt.sample()), usedTokens: 0, storedTurns: 0 });
  let stats;
  while ((stats?.turn ?? 0) < TURNS) {
    stats = await rt.advance(Math.min(EVERY, TURNS - (stats?.turn ?? 0)));
    const s = { turn: stats.turn, ...(await rt.sample()), usedTokens: stats.usedTokens, storedTurns: stats.storedTurns, cacheEntries: stats.cacheEntries };
    samples.push(s);
    if (stats.turn % (EVERY * 4) === 0 || stats.turn === TURNS) log(`${name} turn ${stats.turn}: wasm ${MB(s.wasm)} MB, heap ${MB(s.heap)} MB, context ${stats.usedTokens} tokens, compactions ${stats.compactions}`);
  }
  await rt.stop?.();
  return { name, samples, stats, seconds: (performance.now() - t0) / 1000 };
}

function nodeRuntime(cg) {
  let session;
  return {
    start: () => {
      session = createSession(cg, SESSION);
    },
    advance: (n) => session.run(n),
    sample: () => {
      globalThis.gc();
      globalThis.gc();
      return { wasm: cg.memoryStats().wasmBytes, heap: process.memoryUsage().heapUsed };
    },
    stop: () => session.free(),
  };
}

async function chromiumRuntime() {
  const { chromium } = await import('playwright-core');
  const { startServer } = await import(pathToFileURL(path.join(ROOT, 'scripts', 'serve.mjs')).href);
  const { server, url } = await startServer({ port: 0, quiet: true, mounts: { '/pkg/': path.join(ROOT, 'pkg'), '/benches/': BENCH } });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxguard-soak-'));
  // The flags headless Chromium needs here (root, no network).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const cdp = await context.newCDPSession(page);
  const check = () => {
    if (errors.length) throw new Error(`page error: ${errors.join('; ')}`);
  };
  return {
    version: context.browser()?.version() ?? 'chromium',
    start: async () => {
      await page.goto(`${url}benches/soak.html`);
      await page.waitForFunction(() => window.soakReady === true, null, { timeout: 60_000 });
      await page.evaluate((o) => window.soak.start(o), SESSION);
      check();
    },
    advance: async (n) => {
      const s = await page.evaluate((k) => window.soak.run(k), n);
      check();
      return s;
    },
    sample: async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      await cdp.send('HeapProfiler.collectGarbage');
      const { usedSize } = await cdp.send('Runtime.getHeapUsage');
      return { wasm: await page.evaluate(() => window.soak.wasmBytes()), heap: usedSize };
    },
    stop: async () => {
      await context.close();
      server.closeAllConnections?.();
      await new Promise((ok) => server.close(() => ok()));
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------ verdict

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};
/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den ? num / den : 0;
}

/**
 * Levels off when, in the last quarter of the run, the peaks of the wasm memory and of the heap
 * stay within 10 % of their peaks in the steady state before it (from the first compaction to
 * 75 % of the turns: before the first compaction memory grows by design), and the heap's trend
 * over the second half would add less than 10 % of its steady median over the whole run.
 */
function verdict(run) {
  const out = {};
  const first = run.stats.compactionTurns[0] ?? TURNS * 0.25;
  const middle = run.samples.filter((s) => s.turn > first && s.turn <= TURNS * 0.75);
  const last = run.samples.filter((s) => s.turn > TURNS * 0.75);
  for (const key of ['wasm', 'heap']) {
    const mid = middle.map((s) => s[key]);
    const end = last.map((s) => s[key]);
    const peakRatio = Math.max(...end) / Math.max(...mid);
    const medianRatio = median(end) / median(mid);
    const perTurn = slope(run.samples.filter((s) => s.turn > TURNS / 2).map((s) => [s.turn, s[key]]));
    // The linear memory only grows: its value is already a peak, so only the peak is compared.
    // The heap follows the compaction cycle (a saw-tooth): its trend is the slope over the second
    // half, which must not add more than 10 % of the middle median over a whole run.
    const flat = peakRatio <= 1.1 && (key === 'wasm' || perTurn * TURNS <= 0.1 * median(mid));
    out[key] = { midPeak: Math.max(...mid), endPeak: Math.max(...end), midMedian: median(mid), endMedian: median(end), peakRatio, medianRatio, perTurn, flat };
  }
  out.flat = out.wasm.flat && out.heap.flat;
  return out;
}

const BARS = '▁▂▃▄▅▆▇█';
function sparkline(xs) {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.map((x) => BARS[hi === lo ? 0 : Math.round(((x - lo) / (hi - lo)) * 7)]).join('');
}

// ------------------------------------------------------------------ run

const runs = [];
const env = { node: process.version, cores: os.cpus().length, loadStart: os.loadavg().map((x) => x.toFixed(1)).join(' ') };
if (RUNTIMES.includes('node')) {
  const cg = await import('ctxguard');
  log(`node: ${TURNS} turns, a sample every ${EVERY}`);
  runs.push(await soak('Node', nodeRuntime(cg)));
}
if (RUNTIMES.includes('chromium')) {
  const rt = await chromiumRuntime();
  env.chromium = rt.version;
  log(`chromium ${rt.version}: ${TURNS} turns, a sample every ${EVERY}`);
  runs.push(await soak('Chromium', rt));
}
env.loadEnd = os.loadavg().map((x) => x.toFixed(1)).join(' ');
for (const r of runs) r.verdict = verdict(r);
if (runs.length === 2) {
  const [a, b] = runs.map((r) => JSON.stringify(r.stats.compactionTurns));
  if (a !== b) throw new Error(`the two runtimes compacted at different turns: ${a} vs ${b}`);
}

// ------------------------------------------------------------------ report

const lines = [];
const p = (s = '') => lines.push(s);
const head = runs[0];
const st = head.stats;
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'benches'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ? ' + local changes' : '';
p(`Command: \`node benches/soak.mjs\` (or \`make soak\`; \`--quick\` for 200 turns). ${new Date().toISOString().slice(0, 10)}, commit ${commit}${dirty}, Node ${env.node}${env.chromium ? `, Chromium ${env.chromium}` : ''}, ${env.cores} shared cores, load average ${env.loadStart} → ${env.loadEnd}.`);
p();
p(`The session (\`benches/lib/soak-session.mjs\`, seed ${SESSION.seed}): ${TURNS} turns on \`gpt-4o\` with a ${SESSION.config.contextWindow.toLocaleString('en')}-token window, ${SESSION.config.reservedOutputTokens.toLocaleString('en')} reserved for output and \`toolOutputLimit\` ${SESSION.config.toolOutputLimit.toLocaleString('en')}. User text in English, German, French, Chinese, Japanese, Russian, Arabic and emoji; in 55 % of the turns 1–3 tool calls (test logs of 10–3,000 lines, JSON search results, code) and a second \`prepare\` after the results; a pasted \`<attachment>\` log every 41 turns, a \`file\` part every 53, a base64 PNG (20–60 KB) every 23. Each turn: \`resolveHistory\` over the stored turns, \`prepare\` with a deterministic SessionState summarizer (answers at once, sized with \`countTokens\`), the checkpoint stored as the turn's chain, \`observeUsage\`, \`measure\` for the meter. Turns older than the previous checkpoint are archived (dropped), as a client keeping them in storage would. ${st.prepares} \`prepare\` calls, ${st.compactions} compactions (turns ${st.compactionTurns.join(', ')}), ${st.degraded} degraded, ${st.emergencyDrops} messages dropped by the emergency layer, peak request ${st.maxUsed.toLocaleString('en')} tokens; both runtimes compacted at the same turns.`);
p();
p(`Memory is sampled every ${EVERY} turns after a full GC (Node: \`gc()\` twice, \`process.memoryUsage().heapUsed\`; Chromium: \`HeapProfiler.collectGarbage\` twice, \`Runtime.getHeapUsage\` over CDP). "wasm" is \`memoryStats().wasmBytes\`, the WebAssembly linear memory, which never shrinks. "context" is the last \`measure\` of the turn (tokens); "count cache entries" is \`guard.cacheStats.entries\`.`);
p();
const cols = runs.map((r) => `${r.name} wasm MB | ${r.name} heap MB`).join(' | ');
p(`| turn | context | stored turns | count cache entries | ${cols} |`);
p(`|---:|---:|---:|---:|${runs.map(() => '---:|---:').join('|')}|`);
for (let i = 0; i < head.samples.length; i++) {
  const s = head.samples[i];
  const cells = runs.map((r) => `${MB(r.samples[i].wasm)} | ${MB(r.samples[i].heap)}`).join(' | ');
  p(`| ${s.turn} | ${s.usedTokens.toLocaleString('en')} | ${s.storedTurns} | ${s.cacheEntries ?? 0} | ${cells} |`);
}
p();
// Curves on the console only (the table above has the figures), each scaled to its min–max.
console.log(`context       ${sparkline(head.samples.map((s) => s.usedTokens))}`);
for (const r of runs) {
  console.log(`${`${r.name} wasm`.padEnd(14)}${sparkline(r.samples.map((s) => s.wasm))}  ${MB(Math.min(...r.samples.map((s) => s.wasm)))}–${MB(Math.max(...r.samples.map((s) => s.wasm)))} MB`);
  console.log(`${`${r.name} heap`.padEnd(14)}${sparkline(r.samples.map((s) => s.heap))}  ${MB(Math.min(...r.samples.map((s) => s.heap)))}–${MB(Math.max(...r.samples.map((s) => s.heap)))} MB`);
}
p('| runtime | time | mean prepare | wasm peak: steady → last 25 % | heap peak: steady → last 25 % | heap median: steady → last 25 % | heap slope, second half | levels off |');
p('|---|---:|---:|---|---|---|---:|---|');
for (const r of runs) {
  const v = r.verdict;
  p(`| ${r.name} | ${r.seconds.toFixed(0)} s | ${(r.stats.prepareMs / r.stats.prepares).toFixed(1)} ms | ${MB(v.wasm.midPeak)} → ${MB(v.wasm.endPeak)} MB | ${MB(v.heap.midPeak)} → ${MB(v.heap.endPeak)} MB | ${MB(v.heap.midMedian)} → ${MB(v.heap.endMedian)} MB | ${(v.heap.perTurn / 1024).toFixed(2)} KB/turn | ${v.flat ? 'yes' : '**no**'} |`);
}
p();
const verdictLine = runs.map((r) => `${r.name} ${r.verdict.flat ? 'levels off' : 'does **not** level off'} (wasm ${MB(r.verdict.wasm.endPeak)} MB from turn ${r.samples.find((x) => x.wasm === r.verdict.wasm.endPeak)?.turn}, heap ${MB(Math.min(...r.samples.slice(1).map((x) => x.heap)))}–${MB(Math.max(...r.samples.map((x) => x.heap)))} MB)`).join('; ');
p(`**Verdict:** ${verdictLine}.`);
p();
p('"Levels off" means: in the last quarter of the run, the peak wasm memory (a high-water mark) and the peak heap stay within 10 % of their peaks in the steady state before it ("steady": from the first compaction to 75 % of the turns; before the first compaction memory grows by design), and the heap\'s least-squares slope over the second half, times the number of turns, stays under 10 % of its steady median. The heap follows the compaction cycle (it holds the live conversation), so medians move with the phase at which a quarter ends.');

const md = lines.join('\n');
process.stdout.write(`${md}\n`);
fs.mkdirSync(path.join(BENCH, 'results'), { recursive: true });
const jsonFile = path.join(BENCH, 'results', quick ? 'soak-quick.json' : 'soak.json');
fs.writeFileSync(jsonFile, JSON.stringify({ env, session: SESSION, turns: TURNS, every: EVERY, runs }, null, 1));
log(`raw samples: ${path.relative(ROOT, jsonFile)}`);

if (write) {
  const BEGIN = '<!-- BEGIN section "Long sessions (soak)" — node benches/soak.mjs rewrites it -->';
  const END = '<!-- END section "Long sessions (soak)" -->';
  const file = path.join(ROOT, 'BENCHMARKS.md');
  let doc = fs.readFileSync(file, 'utf8');
  const section = `${BEGIN}\n\n## Long sessions (soak)\n\n${md}\n\n${END}`;
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) doc = doc.slice(0, a) + section + doc.slice(b + END.length);
  else {
    // Before the hand-maintained issue-7 section, which stays at the end of the file.
    const anchor = doc.indexOf('<!-- BEGIN section "Vocabulary and cold start');
    doc = anchor >= 0 ? `${doc.slice(0, anchor)}${section}\n\n${doc.slice(anchor)}` : `${doc.trimEnd()}\n\n${section}\n`;
  }
  fs.writeFileSync(file, doc);
  log('wrote BENCHMARKS.md ("Long sessions (soak)")');
}
const failed = runs.filter((r) => !r.verdict.flat).map((r) => r.name);
if (failed.length) {
  log(`memory did not level off in: ${failed.join(', ')}`);
  process.exitCode = 1;
}
