// Turns the results object into Markdown tables (printed and written to BENCHMARKS.md's generated
// section, kept compact: one table per question, both runtimes side by side).

import { median } from './measure.mjs';
import { INPUTS, ADVERSARIAL } from './inputs.mjs';
import { COUNT_API } from './adapters.mjs';

const REF = 'gpt-tokenizer';
const US = 'ctxguard';
const ENC_SHORT = { o200k_base: 'o200k', cl100k_base: 'cl100k' };
const RT_LABEL = { node: 'Node', chromium: 'Chromium' };
/** The inputs of the throughput table; the adversarial ones have a table of their own. */
const MAIN = ['prose', 'code', 'cjk', 'chat', 'minjson', 'base64'];

const fmt = (x, d = 1) => (x == null || !Number.isFinite(x) ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(d));
const ratio = (a, b) => (a == null || b == null || !b ? null : a / b);
const fmtRatio = (r) => (r == null ? '' : `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`);
const kb = (b) => (b / 1024).toFixed(0);
const mb = (b) => (b / (1024 * 1024)).toFixed(1);
const label = (id) => INPUTS.find((x) => x.id === id)?.label ?? id;

function table(head, rows) {
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

function inputBytes(manifest, id) {
  return manifest.files[id].bytes;
}

/** Median MB/s of a throughput cell (each run on a variant not seen before), or a `{ capped }` marker. */
export function cellSpeed(cell, bytes) {
  if (!cell) return { na: true };
  if (cell.capped) return { capped: true, capMs: cell.capMs, upper: bytes / 1e3 / cell.capMs };
  if (cell.error || !cell.samples?.length) return { error: cell.error ?? 'no samples', errorAfterMs: cell.errorAfterMs };
  const mbps = median(cell.samples.map((x) => x.mbps));
  return {
    mbps,
    ms: median(cell.samples.map((x) => x.ms)),
    n: cell.samples.length,
    onlyFirst: !!cell.onlyFirst,
    firstMbps: bytes / 1e3 / cell.firstMs,
    againMbps: cell.again?.length ? median(cell.again.map((x) => x.mbps)) : null,
  };
}

/**
 * Speed of `lib` ÷ speed of the reference on one input: the median of the per-round ratios measured
 * in the same process/page (interleaved runs), or the ratio of the medians when there are none
 * (one side ran only its warm-up, or its figure came from an earlier pair).
 */
export function speedRatio(tp, lib, enc, id, bytes) {
  const us = cellSpeed(tp?.[lib]?.[enc]?.inputs?.[id], bytes);
  const ref = cellSpeed(tp?.[REF]?.[enc]?.inputs?.[id], bytes);
  const paired = tp?.[lib]?.[enc]?.ratios?.[id];
  if (us.mbps != null && ref.mbps != null) return { r: paired?.length ? median(paired) : us.mbps / ref.mbps, paired: paired?.length ?? 0 };
  if (us.capped && ref.mbps != null) return { upper: us.upper / ref.mbps };
  if (us.capped && ref.capped) return { both: true };
  if (ref.capped && us.mbps != null) return { lower: us.mbps / ref.upper };
  return {};
}

function ratioText(q) {
  if (q.r != null) return fmtRatio(q.r);
  if (q.upper != null) return `< ${fmtRatio(q.upper)}`;
  if (q.lower != null) return `> ${fmtRatio(q.lower)}`;
  if (q.both) return 'both over cap';
  return '—';
}

/** A failed first call, in a word or two. */
function failText(s) {
  if (s.na) return 'n/a';
  if (s.capped) return `> ${(s.capMs / 1000).toFixed(0)} s cap`;
  return /unreachable/.test(s.error) ? 'wasm trap' : /out of memory|Out of memory|allocation/i.test(s.error) ? 'out of memory' : 'error';
}

/** `MB/s (÷ reference)`, `*` when fewer than 3 timed runs. */
function speedText(s, q) {
  if (s.mbps == null) return failText(s);
  return `${fmt(s.mbps)}${q ? ` (${ratioText(q)})` : ''}${s.n < 3 ? '*' : ''}`;
}

/** ctxguard ÷ gpt-tokenizer on text just counted: paired per-round ratios when there are, else the ratio of medians. */
function againRatio(tp, enc, id, bytes) {
  const paired = tp?.[US]?.[enc]?.againRatios?.[id];
  if (paired?.length) return median(paired);
  const us = cellSpeed(tp?.[US]?.[enc]?.inputs?.[id], bytes).againMbps;
  const ref = cellSpeed(tp?.[REF]?.[enc]?.inputs?.[id], bytes).againMbps;
  return us != null && ref != null ? us / ref : null;
}

/** The headline: ctxguard's throughput ÷ gpt-tokenizer's, per input, encoding and runtime (and on text just counted). */
export function headlineTable(results, runtimes, encodings, ids) {
  const head = ['input'];
  for (const enc of encodings) for (const rt of runtimes) head.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}`);
  const rows = ids.map((id) => {
    const bytes = inputBytes(results.meta.inputs, id);
    const row = [label(id)];
    for (const enc of encodings) {
      for (const rt of runtimes) {
        const tp = results.throughput?.[rt];
        const q = speedRatio(tp, US, enc, id, bytes);
        const again = againRatio(tp, enc, id, bytes);
        row.push(`${ratioText(q)}${again != null ? ` (${fmtRatio(again)})` : ''}`);
      }
    }
    return row;
  });
  return table(head, rows);
}

/** Median MB/s of every library in both runtimes, ÷ gpt-tokenizer in parentheses. */
export function throughputTable(results, runtimes, libs, encodings, ids) {
  const head = ['input', 'enc'];
  for (const lib of libs) for (const rt of runtimes) head.push(`${lib}, ${RT_LABEL[rt]}`);
  const rows = [];
  for (const id of ids) {
    const bytes = inputBytes(results.meta.inputs, id);
    for (const enc of encodings) {
      const row = [`${label(id)} (${+(bytes / 1e6).toFixed(2)} MB)`, ENC_SHORT[enc]];
      for (const lib of libs) {
        for (const rt of runtimes) {
          const tp = results.throughput?.[rt];
          row.push(speedText(cellSpeed(tp?.[lib]?.[enc]?.inputs?.[id], bytes), lib === REF ? null : speedRatio(tp, lib, enc, id, bytes)));
        }
      }
      rows.push(row);
    }
  }
  return table(head, rows);
}

/** Time per MB on `id` ÷ the same library's on prose, same runtime and encoding: `{ v, lower, s }`. */
function againstProse(results, rt, lib, enc, id) {
  const tp = results.throughput?.[rt];
  const prose = cellSpeed(tp?.[lib]?.[enc]?.inputs?.prose, inputBytes(results.meta.inputs, 'prose'));
  const s = cellSpeed(tp?.[lib]?.[enc]?.inputs?.[id], inputBytes(results.meta.inputs, id));
  if (prose.mbps == null) return { s, prose };
  if (s.mbps != null) return { v: prose.mbps / s.mbps, s };
  if (s.capped) return { v: prose.mbps / s.upper, lower: true, s };
  return { s };
}

/** The adversarial inputs against prose, every library, both runtimes. */
export function adversarialTable(results, runtimes, libs, encodings, ids) {
  const head = ['input', 'enc'];
  for (const lib of libs) for (const rt of runtimes) head.push(`${lib}, ${RT_LABEL[rt]}`);
  const rows = [];
  for (const id of ids) {
    for (const enc of encodings) {
      const row = [label(id), ENC_SHORT[enc]];
      for (const lib of libs) {
        for (const rt of runtimes) {
          const a = againstProse(results, rt, lib, enc, id);
          if (a.v == null) row.push(a.s.mbps != null ? `— (${fmt(a.s.mbps)}; prose: ${failText(a.prose)})` : failText(a.s));
          else if (a.lower) row.push(`> ${fmtRatio(a.v)} (cap)`);
          else row.push(`${fmtRatio(a.v)} (${fmt(a.s.mbps)})${a.s.n < 3 ? '*' : ''}`);
        }
      }
      rows.push(row);
    }
  }
  return table(head, rows);
}

/** ctxguard's speed ÷ hypertok's in one regime of the `versus` phase: the median paired ratio. */
function versusRatio(cell, regime) {
  const xs = cell?.ratios?.[regime] ?? [];
  return xs.length ? median(xs) : null;
}

/** MB/s of one library in one regime of the `versus` phase (median). */
function versusSpeed(cell, lib, regime) {
  const xs = cell?.libs?.[lib]?.[regime] ?? [];
  return xs.length ? median(xs.map((x) => x.mbps)) : null;
}

/** The three regimes, ctxguard against hypertok, one table per runtime. */
export function versusTable(results, rt, encodings, ids) {
  const byEnc = results.versus?.[rt];
  if (!byEnc) return null;
  const head = ['input', 'enc'];
  for (const r of ['first sight', 'unseen text', 'same text again']) head.push(`${r}: ctxguard MB/s`, 'hypertok', '÷');
  head.push('counts');
  const rows = [];
  for (const id of ids) {
    for (const enc of encodings) {
      const cell = byEnc[enc]?.[id];
      if (!cell) continue;
      const row = [label(id), ENC_SHORT[enc]];
      for (const regime of ['first', 'unseen', 'again']) {
        const r = versusRatio(cell, regime);
        row.push(fmt(versusSpeed(cell, 'ctxguard', regime)), fmt(versusSpeed(cell, 'hypertok', regime)), r == null ? '—' : r < 1 ? `**${fmtRatio(r)}**` : fmtRatio(r));
      }
      const n = Object.keys(cell.libs.ctxguard.counts).length;
      row.push(cell.errors.length ? `**${cell.errors.join('; ')}**` : `equal (${n} variants)`);
      rows.push(row);
    }
  }
  return table(head, rows);
}

export function coldTable(results, runtimes, libs, encodings) {
  const head = ['library'];
  for (const enc of encodings) for (const rt of runtimes) head.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}`);
  const rows = libs.map((lib) => {
    const row = [lib];
    for (const enc of encodings) {
      for (const rt of runtimes) {
        const c = results.cold?.[rt]?.[lib]?.[enc];
        const m = median(c?.samples ?? []);
        const ref = median(results.cold?.[rt]?.[REF]?.[enc]?.samples ?? []);
        if (m == null) row.push(c?.errors?.length ? 'error' : '—');
        else row.push(`${fmt(m, 0)} ms${lib === REF ? '' : ` (${fmtRatio(ratio(m, ref))})`}`);
      }
    }
    return row;
  });
  return table(head, rows);
}

/** The harness's own modules, loaded before each cold-start clock starts (the same for every library). */
function harnessLoad(results, runtimes) {
  const parts = [];
  for (const rt of runtimes) {
    const xs = Object.values(results.cold?.[rt] ?? {}).flatMap((byEnc) => Object.values(byEnc).flatMap((c) => c.harnessMs ?? []));
    if (xs.length) parts.push(`${RT_LABEL[rt]} ${fmt(median(xs), 1)} ms`);
  }
  return parts.length ? `Before each clock starts, the harness's own two modules load in the same fresh process or page (median ${parts.join(', ')}; not counted, the same for every library).` : null;
}

/** Median RSS Δ held after the first count (0.5 s later; runs before 2026-11-30 14:30 had only the snapshot right after it). */
export const heldRss = (samples) => median(samples.map((s) => (s.held ?? s.afterFirst).rss));

export function memoryTable(results, libs, encodings) {
  const mem = results.memory?.node;
  if (!mem) return null;
  const rows = [];
  for (const enc of encodings) {
    const refOf = (k) => median((mem[REF]?.[enc]?.samples ?? []).map((s) => s[k]?.rss));
    for (const lib of libs) {
      const ss = mem[lib]?.[enc]?.samples ?? [];
      if (!ss.length) {
        rows.push([lib, ENC_SHORT[enc], 'error', '', '', '']);
        continue;
      }
      const rssOf = (k) => {
        const v = median(ss.map((s) => s[k]?.rss));
        return v == null || Number.isNaN(v) ? '—' : `${mb(v)}${lib === REF ? '' : ` (${fmtRatio(ratio(v, refOf(k)))})`}`;
      };
      rows.push([lib, ENC_SHORT[enc], rssOf('held'), rssOf('afterFirst'), mb(median(ss.map((s) => s.afterFirst.js))), mb(median(ss.map((s) => s.afterProse.rss)))]);
    }
  }
  return table(['library', 'enc', 'RSS Δ MB held, 0.5 s after the first count (÷ gpt-tokenizer)', 'RSS Δ MB right after it (÷)', 'heap+external+arrayBuffers Δ MB', 'RSS Δ MB after 1 MB of prose'], rows);
}

export function downloadTable(results, libs, encodings) {
  const dl = results.download;
  if (!dl) return null;
  const rows = [];
  for (const enc of encodings) {
    const ref = dl[REF]?.[enc];
    for (const lib of libs) {
      const d = dl[lib]?.[enc];
      if (!d) {
        rows.push([lib, ENC_SHORT[enc], '—', '—', '—', '—']);
        continue;
      }
      const files = d.files.map((f) => `${f.path.split('/').pop()} ${kb(f.gzip)}`).join(' + ');
      const rel = (k) => (lib === REF || d[k] === undefined ? '' : ` (${fmtRatio(ratio(d[k], ref?.[k]))})`);
      rows.push([lib, ENC_SHORT[enc], files, kb(d.raw), `${kb(d.gzip)}${rel('gzip')}`, d.brotli === undefined ? '—' : `${kb(d.brotli)}${rel('brotli')}`]);
    }
  }
  return table(['library', 'enc', 'files fetched (gzip KB each)', 'raw KB', 'gzip -9 KB (÷ gpt-tokenizer)', 'brotli 11 KB (÷)'], rows);
}

/** First call ÷ baseline: the median over the fresh processes when there were several. */
const coldRatio = (o) => (o.coldRatios?.length ? median(o.coldRatios) : o.coldMs / o.baselineMs);
/** ` (median of n processes; min–max)` of per-process ratios, when there are several. */
const spread = (xs) => (xs?.length > 1 ? ` (${fmtRatio(Math.min(...xs))}–${fmtRatio(Math.max(...xs))})` : '');

export function chatExtrasTable(results, runtimes, encodings) {
  const rows = [];
  for (const rt of runtimes) {
    for (const enc of encodings) {
      const x = results.chatExtras?.[rt]?.[enc];
      const cm = x?.countMessages;
      const g = x?.guard;
      const show = (o, f) => (!o ? '—' : o.available === false ? 'n/a' : o.error ? 'error' : f(o));
      rows.push([
        RT_LABEL[rt], ENC_SHORT[enc],
        show(g, (o) => `${fmt(o.baselineMs, 0)} ms`),
        show(cm, (o) => `${fmtRatio(coldRatio(o))}${spread(o.coldRatios)}`),
        show(g, (o) => `${fmtRatio(coldRatio(o))}${spread(o.coldRatios)}`),
        show(g, (o) => (o.unseenRatios?.length ? `${fmtRatio(median(o.unseenRatios))}${spread(o.unseenRatios)}` : '—')),
        show(g, (o) => `${fmt(o.againMs, 1)} ms`),
        show(g, (o) => `${fmt(median(o.incrementalMs), 1)} ms`),
      ]);
    }
  }
  return table(['runtime', 'enc', 'countTokens on each message (baseline)', 'countMessages, first ÷ baseline', 'guard.measure, first ÷ baseline', 'the same, code warm (new guard, other conversation)', 'measure again', 'measure after +1 message'], rows);
}

/** countMessages' and measure's totals, which must agree with each other and across runtimes. */
function chatTotals(results, runtimes, encodings) {
  const parts = [];
  const errors = [];
  for (const enc of encodings) {
    const seen = new Set();
    for (const rt of runtimes) {
      const x = results.chatExtras?.[rt]?.[enc];
      if (x?.countMessages?.total != null) seen.add(x.countMessages.total);
      if (x?.guard?.usedTokens != null) seen.add(x.guard.usedTokens);
      for (const k of ['countMessages', 'guard']) if (x?.[k]?.error) errors.push(`${RT_LABEL[rt]} ${ENC_SHORT[enc]} ${k}: ${x[k].error}`);
    }
    if (seen.size) parts.push(`${ENC_SHORT[enc]} ${[...seen].join(' ≠ ')}`);
  }
  const agree = parts.every((p) => !p.includes('≠'));
  return [
    parts.length ? `Totals (countMessages and measure, every runtime): ${parts.join('; ')}${agree ? ' — equal.' : ' — **they differ**.'}` : null,
    errors.length ? `Errors: ${errors.join('; ')}.` : null,
  ].filter(Boolean).join(' ');
}

/**
 * Count agreement: every counter's counts (every variant it counted; for the chat also the
 * per-message fingerprint) against the reference's — gpt-tokenizer in Node, or when it did not
 * finish, the first peer that did — on every input and encoding, in both runtimes. One row per
 * input; each cell is `o200k / cl100k`.
 */
export function agreement(results, runtimes, libs, encodings, ids) {
  const rows = [];
  const mismatches = [];
  const lonely = [];
  const order = [REF, ...libs.filter((l) => l !== REF && l !== US), US];
  for (const id of ids) {
    const f = results.meta.inputs.files[id];
    const refCells = [];
    const libCells = Object.fromEntries(libs.map((l) => [l, []]));
    for (const enc of encodings) {
      // Reference count per variant: the first library (in `order`, Node first) that counted it.
      const ref = {};
      for (const lib of order) {
        for (const rt of ['node', 'chromium']) {
          const c = results.throughput?.[rt]?.[lib]?.[enc]?.inputs?.[id];
          for (const [v, n] of Object.entries(c?.counts ?? {})) ref[v] ??= { lib, rt, count: n, fingerprint: c.fingerprints?.[v] ?? null };
        }
      }
      refCells.push(ref[0] ? String(ref[0].count) : '—');
      let finished = 0;
      for (const lib of libs) {
        let compared = 0;
        let counted = 0;
        const bad = [];
        const missing = [];
        for (const rt of runtimes) {
          const c = results.throughput?.[rt]?.[lib]?.[enc]?.inputs?.[id];
          if (!c?.counts || !Object.keys(c.counts).length) {
            missing.push(`${c?.capped ? 'cap' : c ? 'error' : 'n/a'}${runtimes.length > 1 ? ` in ${RT_LABEL[rt]}` : ''}`);
            continue;
          }
          counted++;
          for (const [v, n] of Object.entries(c.counts)) {
            const rv = ref[v];
            if (rv.lib === lib && rv.rt === rt) continue; // its own figure is the reference
            compared++;
            const fp = c.fingerprints?.[v];
            if (n !== rv.count || (fp && rv.fingerprint && fp !== rv.fingerprint)) {
              bad.push(`v${v} ${n}${n === rv.count ? ' (per message)' : ''}`);
              mismatches.push({ id, enc, lib, runtime: rt, variant: Number(v), count: n, ref: rv });
            }
          }
        }
        if (counted) finished++;
        let cell = bad.length ? `**≠ ${bad.join(', ')}**` : counted ? (compared ? `=${compared}` : 'ref') : '';
        if (missing.length === runtimes.length) cell = missing.length === 2 && missing[0].split(' ')[0] === missing[1].split(' ')[0] ? missing[0].split(' ')[0] : missing.join(', ');
        else if (missing.length) cell += ` (${missing.join(', ')})`;
        libCells[lib].push(cell);
      }
      if (finished < 2) lonely.push(`${id}/${ENC_SHORT[enc]}`);
    }
    rows.push([label(id), String(f.bytes), f.sha256.slice(0, 12), refCells.join(' / '), ...libs.map((l) => libCells[l].join(' / '))]);
  }
  return { table: table(['input', 'bytes', 'sha256', `reference count, variant 0 (${encodings.map((e) => ENC_SHORT[e]).join(' / ')})`, ...libs], rows), mismatches, lonely };
}

/** The performance targets against this run's figures (worst case over inputs, encodings and runtimes). */
export function targetsTable(results, runtimes, encodings, ids) {
  const rows = [];
  const worst = (xs, pick) => (xs.length ? xs.reduce((a, b) => (pick(a.v, b.v) ? a : b)) : null);
  const min = (a, b) => a <= b;
  const max = (a, b) => a >= b;
  const status = (ok) => (ok == null ? '—' : ok ? 'met' : '**not met**');
  // Throughput ≥ 1.5× gpt-tokenizer on prose, code, CJK and the per-message chat.
  {
    const xs = [];
    for (const rt of runtimes) for (const enc of encodings) for (const id of ['prose', 'code', 'cjk', 'chat']) {
      if (!ids.includes(id)) continue;
      const q = speedRatio(results.throughput?.[rt], US, enc, id, inputBytes(results.meta.inputs, id));
      if (q.r != null) xs.push({ v: q.r, where: `${id}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
    }
    const w = worst(xs, min);
    rows.push(['throughput ≥ 1.5× gpt-tokenizer (prose, code, CJK, chat per message; unseen text)', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v >= 1.5)]);
    const xa = [];
    for (const rt of runtimes) for (const enc of encodings) for (const id of ['prose', 'code', 'cjk', 'chat']) {
      if (!ids.includes(id)) continue;
      const bytes = inputBytes(results.meta.inputs, id);
      const r = againRatio(results.throughput?.[rt], enc, id, bytes);
      if (r != null) xa.push({ v: r, where: `${id}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
    }
    const wa = worst(xa, min);
    rows.push(['(not a target) the same ratio on text just counted, gpt-tokenizer\'s cache warm', wa ? `${fmtRatio(wa.v)} (${wa.where})` : '—', wa ? (wa.v >= 1.5 ? '≥ 1.5×' : '< 1.5×') : '—']);
  }
  // Throughput ≥ 1.0× hypertok's in every regime (issue #30).
  if (results.versus && Object.keys(results.versus).length) {
    for (const [regime, what] of [['first', 'first sight'], ['unseen', 'unseen text'], ['again', 'the same text again']]) {
      const xs = [];
      for (const rt of runtimes) for (const enc of encodings) for (const id of ['prose', 'code', 'cjk', 'chat']) {
        const r = versusRatio(results.versus[rt]?.[enc]?.[id], regime);
        if (r != null) xs.push({ v: r, where: `${id}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
      }
      const w = worst(xs, min);
      rows.push([`throughput ≥ 1.0× hypertok, ${what} (prose, code, CJK, chat per message)`, w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v >= 1)]);
    }
  }
  // Cold start ≤ 0.5× gpt-tokenizer.
  {
    const xs = [];
    for (const rt of runtimes) for (const enc of encodings) {
      const us = median(results.cold?.[rt]?.[US]?.[enc]?.samples ?? []);
      const ref = median(results.cold?.[rt]?.[REF]?.[enc]?.samples ?? []);
      if (us != null && ref) xs.push({ v: us / ref, where: `${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
    }
    const w = worst(xs, max);
    rows.push(['cold start ≤ 0.5× gpt-tokenizer', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v <= 0.5)]);
    const xh = [];
    for (const enc of encodings) {
      const us = median(results.cold?.node?.[US]?.[enc]?.samples ?? []);
      const ht = median(results.cold?.node?.hypertok?.[enc]?.samples ?? []);
      if (us != null && ht) xh.push({ v: us / ht, where: `${ENC_SHORT[enc]}, Node` });
    }
    const wh = worst(xh, max);
    if (wh) rows.push(['cold start ≤ 0.25× hypertok in Node', `${fmtRatio(wh.v)} (${wh.where})`, status(wh.v <= 0.25)]);
  }
  // Download ≤ gpt-tokenizer per encoding.
  {
    const xs = [];
    for (const enc of encodings) {
      const us = results.download?.[US]?.[enc]?.gzip;
      const ref = results.download?.[REF]?.[enc]?.gzip;
      if (us && ref) xs.push({ v: us / ref, where: `${ENC_SHORT[enc]}: ${kb(us)} KB vs ${kb(ref)} KB` });
    }
    const w = worst(xs, max);
    rows.push(['download (gzip) ≤ gpt-tokenizer\'s, per encoding', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v <= 1)]);
  }
  // Memory ≤ 0.5× the peers' (RSS held after loading one encoding; against the smallest peer).
  {
    const xs = [];
    const mem = results.memory?.node ?? {};
    for (const enc of encodings) {
      const rss = (lib) => heldRss(mem[lib]?.[enc]?.samples ?? []);
      const us = rss(US);
      const peers = Object.keys(mem).filter((l) => l !== US).map((l) => [l, rss(l)]).filter(([, v]) => v != null);
      if (us == null || !peers.length) continue;
      const [pl, pv] = peers.reduce((a, b) => (a[1] <= b[1] ? a : b));
      // The snapshot right after the first count too (the figure of runs before the held one).
      const right = (lib) => median((mem[lib]?.[enc]?.samples ?? []).map((s) => s.afterFirst.rss));
      const held = (mem[US]?.[enc]?.samples ?? []).some((s) => s.held);
      const also = held ? `; right after the first count ${fmtRatio(right(US) / right(pl))}` : '';
      xs.push({ v: us / pv, where: `${ENC_SHORT[enc]}, Node RSS${held ? ' held' : ''}: ${mb(us)} MB vs ${pl} ${mb(pv)} MB${also}` });
    }
    const w = worst(xs, max);
    rows.push(['memory per encoding ≤ 0.5× the leanest peer', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v <= 0.5)]);
  }
  // measure after +1 message ≤ 5 ms; from cold ≤ 1.1× counting the text once.
  {
    const inc = [];
    const cold = [];
    const unseen = [];
    const incomplete = [];
    for (const rt of runtimes) for (const enc of encodings) {
      const g = results.chatExtras?.[rt]?.[enc]?.guard;
      if (!g?.available || g.error) {
        // A cell without figures makes the row incomplete rather than leaving its worst case out.
        incomplete.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}: ${g?.error ?? g?.errors?.[0] ?? 'not measured'}`);
        continue;
      }
      if (g.errors?.length) incomplete.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}: ${g.errors.length} of ${g.errors.length + g.coldRatios.length} processes failed`);
      inc.push({ v: median(g.incrementalMs), where: `${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
      cold.push({ v: coldRatio(g), where: `${ENC_SHORT[enc]}, ${RT_LABEL[rt]}${g.coldRatios?.length > 1 ? `, median of ${g.coldRatios.length} processes` : ''}` });
      if (g.unseenRatios?.length) unseen.push({ v: median(g.unseenRatios), where: `${ENC_SHORT[enc]}, ${RT_LABEL[rt]}${g.unseenRatios.length > 1 ? `, median of ${g.unseenRatios.length} processes` : ''}` });
    }
    const wi = worst(inc, max);
    const wc = worst(cold, max);
    const gaps = incomplete.length ? `; **incomplete**: ${incomplete.join('; ')}` : '';
    rows.push([`\`measure\` after one new message ≤ 5 ms (${results.meta.inputs.files.chat.messages} messages)`, wi ? `${fmt(wi.v, 1)} ms (${wi.where})${gaps}` : 'n/a', status(wi && wi.v <= 5 && !incomplete.length)]);
    rows.push(['`measure` from cold ≤ 1.1× counting the text once', wc ? `${fmtRatio(wc.v)} (${wc.where})${gaps}` : 'n/a', status(wc && wc.v <= 1.1 && !incomplete.length)]);
    // The same ratio once the engine has compiled the measure path (a new guard, a conversation
    // it has not seen): the library's own work over counting, without the first-use compilation.
    const wu = worst(unseen, max);
    if (wu) rows.push(['(not a target) the same with the code warm: a new guard on another conversation', `${fmtRatio(wu.v)} (${wu.where})`, '']);
  }
  // Adversarial ≤ 2× the time per MB of prose.
  {
    const xs = [];
    for (const rt of runtimes) for (const enc of encodings) {
      const tp = results.throughput?.[rt];
      const prose = cellSpeed(tp?.[US]?.[enc]?.inputs?.prose, inputBytes(results.meta.inputs, 'prose'));
      if (prose.mbps == null) continue;
      for (const id of ADVERSARIAL) {
        if (!ids.includes(id)) continue;
        const s = cellSpeed(tp?.[US]?.[enc]?.inputs?.[id], inputBytes(results.meta.inputs, id));
        if (s.mbps != null) xs.push({ v: prose.mbps / s.mbps, where: `${label(id)}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
        else if (s.capped) xs.push({ v: prose.mbps / s.upper, where: `${label(id)}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]} (over cap)` });
      }
    }
    const w = worst(xs, max);
    rows.push(['adversarial input ≤ 1.0× the time per MB of prose (unseen text)', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v <= 1)]);
  }
  // Exactness.
  {
    const ag = agreement(results, runtimes, results.meta.selection.libs, encodings, ids);
    rows.push(['counts exact (equal to every peer on every count)', ag.mismatches.length ? `${ag.mismatches.length} mismatch(es)` : 'no mismatch', status(ag.mismatches.length === 0)]);
  }
  return table(['target', 'worst case in this run', ''], rows);
}

/** Where ctxguard was slower than gpt-tokenizer, and which first calls ran past the cap. */
function slowAndCapped(results, runtimes, libs, encodings, ids) {
  const out = [];
  for (const rt of runtimes) {
    const tp = results.throughput?.[rt];
    if (!tp) continue;
    const slower = [];
    const capped = [];
    for (const id of ids) {
      const bytes = inputBytes(results.meta.inputs, id);
      for (const enc of encodings) {
        const q = speedRatio(tp, US, enc, id, bytes);
        if ((q.r != null && q.r < 1) || q.upper != null) slower.push(`${id}/${ENC_SHORT[enc]} ${ratioText(q)}`);
        for (const lib of libs) if (tp[lib]?.[enc]?.inputs?.[id]?.capped) capped.push(`${lib} ${id}/${ENC_SHORT[enc]}`);
      }
    }
    out.push(`${RT_LABEL[rt]}: ctxguard slower than gpt-tokenizer on ${slower.length ? slower.join(', ') : 'no input'}; over the ${(results.meta.params.capMs / 1000).toFixed(0)} s cap: ${capped.length ? capped.join(', ') : 'none'}.`);
  }
  return out;
}

const loadText = (l) => l.map((x) => x.toFixed(2)).join(' / ');

export function notes(results) {
  const m = results.meta;
  const n = [];
  const b = m.bundler;
  n.push(`Chromium loads every library as a production page ships it${b ? `: its entry bundled and minified by ${b.name} ${b.version} (${b.options}), ctxguard included` : ''} — \`benches/lib/bundle.mjs\`. Each entry imports what the counter calls (ctxguard: its whole API); a library's .wasm stays a separate file fetched at run time (ctxguard, tiktoken), JSON (tiktoken's ranks) is inlined as bundlers do. Node loads the packages as published, as Node users do: ctxguard's \`node.js\`, gpt-tokenizer's ESM, \`tiktoken/lite\` (CommonJS, wasm read from disk) with \`encoders/<enc>.json\`, \`js-tiktoken/lite\` with \`ranks/<enc>\`. Earlier reports (up to commit 9b8a6f4) served the peers in Chromium unbundled, module by module through an import map, while ctxguard's entry was already one minified module: that favoured ctxguard's cold start and download.`);
  n.push(`Count APIs: ${Object.entries(COUNT_API).map(([k, v]) => `${k}: \`${v}\``).join('; ')}.`);
  n.push(`Throughput: gpt-tokenizer is paired with each other library in turn, one fresh process (Node) or page (Chromium) per pair and encoding. Each input exists in ${m.inputs.variants} variants (other seeds; the runs of one character one character shorter each). Per input, each library counts variant 0 (warm-up), then up to ${m.params.runs} rounds count variants 1, 2, … — text not seen before — alternating the two libraries, each stopping when its next run would pass ${m.params.budgetMs / 1000} s. MB/s is the median run (MB = 10^6 bytes of UTF-8); a ratio is the median of the per-round ratios within the pair, or the ratio of medians when one side has a single run; ${(m.params.solo ?? []).join(', ') || 'no library'} runs alone (ratio of medians). A first call that does not return within ${m.params.capMs / 1000} s is abandoned (process or browser killed): "> cap". \`*\`: fewer than 3 timed runs.`);
  n.push(`Chat: ${m.inputs.files.chat.messages} OpenAI-format messages, ${m.inputs.files.chat.strings} strings, ${(m.inputs.files.chat.bytes / 1e6).toFixed(2)} MB of text (${m.chatTokens ?? '?'} o200k tokens), counted per string. The conversation APIs run in ${m.params.extrasSamples ?? 1} fresh processes/pages per cell (model gpt-4o or gpt-4; ratios are medians, min–max in parentheses): countTokens on another conversation first (code warm, vocabulary built), then the API on variant 0 (cold caches), again, after one appended message (${m.params.extrasRuns} times), a new guard on a third conversation, and last the baseline, countTokens on each of variant 0's strings.`);
  n.push('Cold start: a fresh `node --input-type=module -e` per sample, or a new browser context and page, from before the library\'s `import` to after the first count of a short sentence; samples interleaved across libraries.');
  n.push('Memory: a fresh `node --expose-gc` per sample; process.memoryUsage() deltas after gc() against a baseline taken after the harness and the prose were loaded. Wasm linear memory shows in RSS only: compare RSS. "Held" is 0.5 s after the first count (V8 may still be compiling a function the first count made hot; the target row uses it).');
  n.push('Download: every file the Chromium cold-start page fetched of the library (harness excluded), gzip -9 and brotli 11 (what CDNs serve) per file, summed.');
  n.push(`ctxguard: ${m.ctxguard.describe}.`);
  return n;
}

export function renderMarkdown(results) {
  const m = results.meta;
  const { runtimes, libs, encodings, ids } = m.selection;
  const main = ids.filter((id) => MAIN.includes(id));
  const adv = ids.filter((id) => ADVERSARIAL.includes(id));
  const out = [];
  const push = (...xs) => out.push(...xs, '');
  push(`Generated by \`${m.command}\` on ${m.date} (${m.mode} run, ${(m.durationMs / 60000).toFixed(1)} min). Load average ${loadText(m.loadStart)} at the start, ${loadText(m.loadEnd)} at the end (1/5/15 min, ${m.nproc} cores shared with other sessions: compare the ratios, measured side by side).`);
  push(`Machine: ${m.cpu}, ${m.os}; Node ${m.node}; ${m.chromium ?? 'Chromium not run'}. ctxguard ${m.ctxguard.version} (commit ${m.ctxguard.commit}${m.ctxguard.dirty ? ', work tree modified' : ''}); ${Object.entries(m.peers).map(([k, v]) => `${k} ${v}`).join(', ')}${m.bundler ? `; ${m.bundler.name} ${m.bundler.version}` : ''}.`);
  push('### Headline: ctxguard throughput ÷ gpt-tokenizer\'s on unseen text (> 1: ctxguard faster; in parentheses the same on text just counted, gpt-tokenizer\'s piece cache warm; "> x": gpt-tokenizer over the cap)');
  push(headlineTable(results, runtimes, encodings, ids));
  push(slowAndCapped(results, runtimes, libs, encodings, ids).map((s) => `- ${s}`).join('\n'));
  push('### Performance targets, as measured in this run');
  push(targetsTable(results, runtimes, encodings, ids));
  if (main.length && results.throughput) {
    push('### Throughput (median MB/s; in parentheses ÷ gpt-tokenizer)');
    push(throughputTable(results, runtimes, libs, encodings, main));
  }
  if (adv.length && results.throughput) {
    push('### Adversarial inputs: time per MB ÷ the same library\'s on prose (same runtime and encoding; MB/s in parentheses)');
    push(adversarialTable(results, runtimes, libs, encodings, adv));
  }
  for (const rt of runtimes) {
    const vt = versusTable(results, rt, encodings, ids);
    if (!vt) continue;
    push(`### ctxguard against hypertok in ${RT_LABEL[rt]}: three regimes (MB/s, medians; ÷ = ctxguard's speed ÷ hypertok's on the same text in the same ${rt === 'node' ? 'process' : 'page'}, median of the paired ratios)`);
    push(vt);
  }
  if (results.versus && Object.keys(results.versus).length) {
    push(`Regimes: **first sight** — a fresh ${'process or page'}, both libraries just loaded (one short warm-up count each), variant 0 counted once by each (median of ${m.params.versusSamples} fresh processes/pages, alternating which library counts first); **unseen text** — then, in the last of them, variants 1–${m.params.runs} (text of the same kind neither has seen; hypertok's piece memo, which keeps every piece for the life of the tokenizer, is warm with the words of the earlier variants, ctxguard's bounded cache with the recent ones); **same text again** — the last variant counted ${m.params.againRuns} more times, alternating: every piece in hypertok's memo, the regime of its published figures and of the issue's measurement. Counts compared variant by variant.`);
  }
  if (libs.includes(US) && ids.includes('chat')) {
    push(`### ctxguard on the whole conversation (${m.inputs.files.chat.messages} messages)`);
    push(chatExtrasTable(results, runtimes, encodings));
    const t = chatTotals(results, runtimes, encodings);
    if (t) push(t);
  }
  push(`### Cold start: import + first count (median of ${m.params.coldNode} processes, ${m.params.coldChromium} pages; ÷ gpt-tokenizer)`);
  push(coldTable(results, runtimes, libs, encodings));
  const hm = harnessLoad(results, runtimes);
  if (hm) push(hm);
  const mt = memoryTable(results, libs, encodings);
  if (mt) {
    push(`### Memory in Node after loading one encoding (median of ${m.params.memSamples} processes)`);
    push(mt);
  }
  const dt = downloadTable(results, libs, encodings);
  if (dt) {
    push('### Download per encoding (what the Chromium page fetched)');
    push(dt);
  }
  const ag = agreement(results, runtimes, libs, encodings, ids);
  push('### Inputs and count agreement (every count of every variant against the reference; "=n": n counts equal; for the chat also every per-message count)');
  push(ag.table);
  push(`${ag.mismatches.length ? `**${ag.mismatches.length} mismatch(es)** — see the bold cells.` : 'No mismatch: every counter that finished gave the same count on every input, in both runtimes.'}${ag.lonely.length ? ` Only one library finished: ${ag.lonely.join(', ')}.` : ''} Inputs: \`benches/lib/inputs.mjs\`, seeded, no downloaded data; the reference is gpt-tokenizer's count in Node, or the first other library's that finished.`);
  out.push('### Notes', '');
  for (const n of notes(results)) out.push(`- ${n}`);
  out.push('');
  return out.join('\n');
}
