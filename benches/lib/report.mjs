// Turns the results object into Markdown tables (printed and written to BENCHMARKS.md).

import { median } from './measure.mjs';
import { INPUTS } from './inputs.mjs';
import { COUNT_API } from './adapters.mjs';

const REF = 'gpt-tokenizer';
const US = 'ctxguard';
const ENC_SHORT = { o200k_base: 'o200k', cl100k_base: 'cl100k' };
const RT_LABEL = { node: 'Node', chromium: 'Chromium' };

const fmt = (x, d = 1) => (x == null || !Number.isFinite(x) ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(d));
const ratio = (a, b) => (a == null || b == null || !b ? null : a / b);
const fmtRatio = (r) => (r == null ? '' : `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`);
const kb = (b) => (b / 1024).toFixed(0);
const mb = (b) => (b / (1024 * 1024)).toFixed(1);

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

function speedText(s, q) {
  if (s.na) return 'n/a';
  if (s.capped) return `> ${(s.capMs / 1000).toFixed(0)} s cap (< ${fmt(s.upper, 2)})${q && q.upper != null ? ` (${ratioText(q)})` : ''}`;
  if (s.error) {
    const what = /unreachable/.test(s.error) ? 'wasm trap (unreachable)' : /out of memory|Out of memory|allocation/i.test(s.error) ? 'out of memory' : 'error';
    return s.errorAfterMs != null ? `${what} after ${fmt(s.errorAfterMs / 1000)} s` : what;
  }
  const r = q ? ` (${ratioText(q)})` : '';
  return `${fmt(s.mbps)}${r}${s.n < 3 ? ` [n=${s.n}]` : ''}`;
}

export function throughputTable(results, runtime, libs, encodings, ids) {
  const tp = results.throughput?.[runtime];
  if (!tp) return null;
  const rows = [];
  for (const id of ids) {
    const bytes = inputBytes(results.meta.inputs, id);
    for (const enc of encodings) {
      const row = [`${INPUTS.find((x) => x.id === id).label} (${+(bytes / 1e6).toFixed(2)} MB)`, ENC_SHORT[enc]];
      for (const lib of libs) row.push(speedText(cellSpeed(tp[lib]?.[enc]?.inputs?.[id], bytes), lib === REF ? null : speedRatio(tp, lib, enc, id, bytes)));
      rows.push(row);
    }
  }
  return table(['input', 'enc', ...libs.map((l) => (l === REF ? `${l} MB/s` : `${l} MB/s (÷ ${REF})`))], rows);
}

/** Throughput when the text was just counted (the last variant again): what per-piece caches do. */
export function againTable(results, runtimes, libs, encodings, ids) {
  const head = ['input', 'enc'];
  for (const rt of runtimes) for (const lib of libs) head.push(`${lib}, ${RT_LABEL[rt]}`);
  const rows = [];
  for (const id of ids) {
    const bytes = inputBytes(results.meta.inputs, id);
    for (const enc of encodings) {
      const row = [INPUTS.find((x) => x.id === id).label, ENC_SHORT[enc]];
      let any = false;
      for (const rt of runtimes) {
        for (const lib of libs) {
          const s = cellSpeed(results.throughput?.[rt]?.[lib]?.[enc]?.inputs?.[id], bytes);
          if (s.againMbps != null) {
            any = true;
            row.push(`${fmt(s.againMbps)} (${fmtRatio(s.againMbps / s.mbps)})`);
          } else row.push('—');
        }
      }
      if (any) rows.push(row);
    }
  }
  return rows.length ? table(head, rows) : null;
}

/** ctxguard ÷ gpt-tokenizer on text just counted: paired per-round ratios when there are, else the ratio of medians. */
function againRatio(tp, enc, id, bytes) {
  const paired = tp?.[US]?.[enc]?.againRatios?.[id];
  if (paired?.length) return median(paired);
  const us = cellSpeed(tp?.[US]?.[enc]?.inputs?.[id], bytes).againMbps;
  const ref = cellSpeed(tp?.[REF]?.[enc]?.inputs?.[id], bytes).againMbps;
  return us != null && ref != null ? us / ref : null;
}

/** ctxguard ÷ gpt-tokenizer when both count the text they just counted (caches warm). */
export function headlineAgainTable(results, runtimes, encodings, ids) {
  const head = ['input'];
  for (const enc of encodings) for (const rt of runtimes) head.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}`);
  let any = false;
  const rows = ids.map((id) => {
    const bytes = inputBytes(results.meta.inputs, id);
    const row = [INPUTS.find((x) => x.id === id).label];
    for (const enc of encodings) {
      for (const rt of runtimes) {
        const tp = results.throughput?.[rt];
        const r = againRatio(tp, enc, id, bytes);
        if (r != null) {
          any = true;
          row.push(fmtRatio(r));
        } else row.push('—');
      }
    }
    return row;
  });
  return any ? table(head, rows) : null;
}

/** The headline: ctxguard's throughput divided by gpt-tokenizer's, per input, encoding and runtime. */
export function headlineTable(results, runtimes, encodings, ids) {
  const head = ['input'];
  for (const enc of encodings) for (const rt of runtimes) head.push(`${ENC_SHORT[enc]}, ${RT_LABEL[rt]}`);
  const rows = ids.map((id) => {
    const bytes = inputBytes(results.meta.inputs, id);
    const row = [INPUTS.find((x) => x.id === id).label];
    for (const enc of encodings) {
      for (const rt of runtimes) {
        const q = speedRatio(results.throughput?.[rt], US, enc, id, bytes);
        row.push(`${ratioText(q)}${q.upper != null ? ' (ctxguard over cap)' : q.lower != null ? ` (${REF} over cap)` : ''}`);
      }
    }
    return row;
  });
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
        else row.push(`${fmt(m, 0)} ms${lib === REF ? '' : ` (${fmtRatio(ratio(m, ref))})`} n=${c.samples.length}`);
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
  return parts.length ? `The clock starts at the library's import: the harness's own two modules (adapters.mjs, measure.mjs) are loaded first, in the same fresh process or page, and not counted — median ${parts.join(', ')}, the same for every library (the eleventh run and earlier counted them in every library's time, which pulled every ratio toward 1).` : null;
}

/** Chromium's cold start counted from navigation start instead (the page's own loading included). */
function sinceNavigation(results, libs, encodings) {
  const parts = [];
  for (const enc of encodings) {
    const ref = median(results.cold?.chromium?.[REF]?.[enc]?.sinceNavigation ?? []);
    for (const lib of libs) {
      const m = median(results.cold?.chromium?.[lib]?.[enc]?.sinceNavigation ?? []);
      if (m != null) parts.push(`${lib} ${ENC_SHORT[enc]} ${fmt(m, 0)} ms${lib === REF ? '' : ` (${fmtRatio(ratio(m, ref))})`}`);
    }
  }
  return parts.length ? `Chromium, from navigation start instead (the harness page's own loading included, as runs before 2026-11-30 10:00 reported it): ${parts.join('; ')}.` : null;
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
        rows.push([lib, ENC_SHORT[enc], 'error', '', '', '', '']);
        continue;
      }
      const rssOf = (k) => {
        const v = median(ss.map((s) => s[k]?.rss));
        return v == null || Number.isNaN(v) ? '—' : `${mb(v)}${lib === REF ? '' : ` (${fmtRatio(ratio(v, refOf(k)))})`}`;
      };
      const js1 = median(ss.map((s) => s.afterFirst.js));
      const js2 = median(ss.map((s) => s.afterProse.js));
      const rss2 = median(ss.map((s) => s.afterProse.rss));
      rows.push([lib, ENC_SHORT[enc], mb(js1), rssOf('afterFirst'), rssOf('held'), mb(js2), mb(rss2)]);
    }
  }
  return table(['library', 'enc', 'heap+external+arrayBuffers Δ MB, after first count', 'RSS Δ MB, right after the first count (÷ gpt-tokenizer)', 'RSS Δ MB, 0.5 s later: held (÷ gpt-tokenizer)', 'heap+ext+ab Δ MB, after 1 MB prose', 'RSS Δ MB, after 1 MB prose'], rows);
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
        rows.push([lib, ENC_SHORT[enc], '—', '—', '—', '', '—', '']);
        continue;
      }
      // Results from before brotli was measured have no `brotli` field.
      const br = d.brotli === undefined ? ['—', ''] : [kb(d.brotli), lib === REF ? '' : fmtRatio(ratio(d.brotli, ref?.brotli))];
      rows.push([lib, ENC_SHORT[enc], String(d.files.length), kb(d.raw), kb(d.gzip), lib === REF ? '' : fmtRatio(ratio(d.gzip, ref?.gzip)), ...br]);
    }
  }
  return table(['library', 'enc', 'files', 'raw KB', 'gzip -9 KB', '÷ gpt-tokenizer', 'brotli 11 KB', '÷ gpt-tokenizer'], rows);
}

export function downloadDetails(results, libs, encodings) {
  const dl = results.download;
  if (!dl) return '';
  const lines = [];
  for (const lib of libs) {
    for (const enc of encodings) {
      const d = dl[lib]?.[enc];
      if (!d) continue;
      lines.push(`- ${lib}, ${ENC_SHORT[enc]}: ${d.files.map((f) => `\`${f.path.replace(/^\/nm\//, 'node_modules/').replace(/^\/cjs\//, '(wrapped) ')}\` ${kb(f.gzip)} KB`).join(', ')}`);
    }
  }
  return lines.join('\n');
}

/** First call ÷ baseline: the median over the fresh processes when there were several. */
const coldRatio = (o) => (o.coldRatios?.length ? median(o.coldRatios) : o.coldMs / o.baselineMs);
/** "; median of n processes, min–max" of per-process ratios, when there are several. */
const range = (xs) => (xs?.length > 1 ? `; ${fmtRatio(median(xs))} median of ${xs.length} processes, ${fmtRatio(Math.min(...xs))}–${fmtRatio(Math.max(...xs))}` : '');

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
        show(cm, (o) => `${fmt(o.baselineMs, 0)} ms`),
        show(cm, (o) => `${fmt(o.coldMs, 0)} ms (${fmtRatio(ratio(o.coldMs, o.baselineMs))}${range(o.coldRatios)})`),
        show(cm, (o) => `${fmt(median(o.againMs), 0)} ms`),
        show(g, (o) => `${fmt(o.baselineMs, 0)} ms`),
        show(g, (o) => `${fmt(o.coldMs, 0)} ms (${fmtRatio(ratio(o.coldMs, o.baselineMs))}${range(o.coldRatios)})`),
        show(g, (o) => `${fmt(o.againMs, 1)} ms`),
        show(g, (o) => `${fmt(median(o.incrementalMs), 1)} ms (n=${o.incrementalMs.length})`),
        show(g, (o) => (o.unseenMs === undefined ? '—' : `${fmt(o.unseenMs, 0)} ms ÷ ${fmt(o.unseenBaselineMs, 0)} ms (${fmtRatio(o.unseenMs / o.unseenBaselineMs)}${range(o.unseenRatios)})`)),
      ]);
    }
  }
  return table(['runtime', 'enc', 'countTokens on each message (baseline)', 'countMessages, first (÷ baseline)', 'countMessages, again', 'baseline (guard process)', 'guard.measure, first (÷ baseline)', 'measure, same messages again', 'measure after +1 message (median)', 'new guard, another conversation, code warm (÷ countTokens on its strings)'], rows);
}

/**
 * Count agreement: every counter's counts (every variant it counted; for the chat also the
 * per-message fingerprint) against the reference's — gpt-tokenizer in Node, or when it did not
 * finish, the first peer that did — on every input and encoding, in both runtimes.
 */
export function agreement(results, runtimes, libs, encodings, ids) {
  const rows = [];
  const mismatches = [];
  const lonely = [];
  const order = [REF, ...libs.filter((l) => l !== REF && l !== US), US];
  for (const id of ids) {
    for (const enc of encodings) {
      // Reference count per variant: the first library (in `order`, Node first) that counted it.
      const ref = {};
      for (const lib of order) {
        for (const rt of ['node', 'chromium']) {
          const c = results.throughput?.[rt]?.[lib]?.[enc]?.inputs?.[id];
          for (const [v, n] of Object.entries(c?.counts ?? {})) ref[v] ??= { lib, rt, count: n, fingerprint: c.fingerprints?.[v] ?? null };
        }
      }
      const r0 = ref[0];
      const row = [INPUTS.find((x) => x.id === id).label, ENC_SHORT[enc], r0 ? `${r0.count} (${r0.lib}, ${RT_LABEL[r0.rt]})` : '—'];
      let finished = 0;
      for (const lib of libs) {
        const parts = [];
        let equal = 0;
        let compared = 0;
        for (const rt of runtimes) {
          const c = results.throughput?.[rt]?.[lib]?.[enc]?.inputs?.[id];
          if (!c) {
            parts.push(`${RT_LABEL[rt]}: n/a`);
            continue;
          }
          if (!c.counts || !Object.keys(c.counts).length) {
            parts.push(`${RT_LABEL[rt]}: ${c.capped ? 'over cap' : 'error'}`);
            continue;
          }
          const bad = [];
          for (const [v, n] of Object.entries(c.counts)) {
            const rv = ref[v];
            if (rv.lib === lib && rv.rt === rt) continue; // its own figure is the reference
            compared++;
            const fp = c.fingerprints?.[v];
            if (n !== rv.count || (fp && rv.fingerprint && fp !== rv.fingerprint)) bad.push({ v, n, rv, fp });
          }
          if (bad.length) {
            parts.push(`${RT_LABEL[rt]}: **${bad.map((b) => `v${b.v} ${b.n} ≠ ${b.rv.count}${b.n === b.rv.count ? ' (per-message counts differ)' : ''}`).join(', ')}**`);
            for (const b of bad) mismatches.push({ id, enc, lib, runtime: rt, variant: Number(b.v), count: b.n, ref: b.rv });
          } else equal++;
        }
        if (equal) finished++;
        row.push(parts.length ? `${equal ? `= in ${equal}; ` : ''}${parts.join('; ')}` : `= (${compared} counts)`);
      }
      if (finished < 2) lonely.push(`${id}/${ENC_SHORT[enc]}`);
      rows.push(row);
    }
  }
  return { table: table(['input', 'enc', 'reference count, variant 0', ...libs], rows), mismatches, lonely };
}

/** Issue #7's targets against this run's figures (worst case over inputs, encodings and runtimes). */
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
    rows.push(['(not an issue #7 target) the same ratio on text just counted, gpt-tokenizer\'s cache warm', wa ? `${fmtRatio(wa.v)} (${wa.where})` : '—', wa ? (wa.v >= 1.5 ? '≥ 1.5×' : '< 1.5×') : '—']);
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
      for (const id of ['minjson', 'base64', 'letters']) {
        if (!ids.includes(id)) continue;
        const s = cellSpeed(tp?.[US]?.[enc]?.inputs?.[id], inputBytes(results.meta.inputs, id));
        if (s.mbps != null) xs.push({ v: prose.mbps / s.mbps, where: `${id}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]}` });
        else if (s.capped) xs.push({ v: prose.mbps / s.upper, where: `${id}, ${ENC_SHORT[enc]}, ${RT_LABEL[rt]} (over cap)` });
      }
    }
    const w = worst(xs, max);
    rows.push(['adversarial input ≤ 2× the time per MB of prose', w ? `${fmtRatio(w.v)} (${w.where})` : '—', status(w && w.v <= 2)]);
  }
  // Exactness.
  {
    const ag = agreement(results, runtimes, results.meta.selection.libs, encodings, ids);
    rows.push(['counts exact (equal to every peer on every count)', ag.mismatches.length ? `${ag.mismatches.length} mismatch(es)` : 'no mismatch', status(ag.mismatches.length === 0)]);
  }
  return table(['target', 'worst case in this run', ''], rows);
}

export function observations(results, runtimes, libs, encodings, ids) {
  const obs = [];
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
    obs.push(`${RT_LABEL[rt]}: ctxguard slower than gpt-tokenizer on ${slower.length ? slower.join(', ') : 'no input'}.`);
    if (capped.length) obs.push(`${RT_LABEL[rt]}: over the ${(results.meta.params.capMs / 1000).toFixed(0)} s cap (first call never returned): ${capped.join(', ')}.`);
    // Adversarial inputs against prose, per MB, for ctxguard.
    for (const enc of encodings) {
      const prose = cellSpeed(tp[US]?.[enc]?.inputs?.prose, inputBytes(results.meta.inputs, 'prose'));
      const parts = [];
      for (const id of ['minjson', 'base64', 'letters']) {
        if (!ids.includes(id) || prose.mbps == null) continue;
        const s = cellSpeed(tp[US]?.[enc]?.inputs?.[id], inputBytes(results.meta.inputs, id));
        if (s.mbps != null) parts.push(`${id} ${fmtRatio(prose.mbps / s.mbps)}`);
        else if (s.capped) parts.push(`${id} > ${fmtRatio(prose.mbps / s.upper)}`);
      }
      if (parts.length) obs.push(`${RT_LABEL[rt]}, ${ENC_SHORT[enc]}: ctxguard's time per MB on adversarial input ÷ its time per MB on prose: ${parts.join(', ')} (issue target: ≤ 2×).`);
    }
  }
  return obs;
}

export function notes(results) {
  const m = results.meta;
  const n = [];
  n.push(`Count APIs: ${Object.entries(COUNT_API).map(([k, v]) => `${k}: \`${v}\``).join('; ')}.`);
  n.push(`Throughput: gpt-tokenizer is paired with each other library in turn; each pair and encoding gets one fresh process (Node) or page (Chromium), which reads the inputs (not timed) and loads both tokenizers. Every input exists in ${m.inputs.variants} variants (same generator and vocabulary, other seeds). Per input, each library first counts variant 0 (warm-up: JIT, wasm tier-up, caches), then up to ${m.params.runs} rounds count variants 1, 2, … — text of the same kind not seen before, as a chat client meets new messages — alternating the two libraries (and which one goes first), each library stopping when its next run would pass ${m.params.budgetMs / 1000} s. MB/s is the median run; the ratio in parentheses is the median of the per-round ratios within the pair (same text, same process, same moment), or the ratio of medians when one side has a single run. gpt-tokenizer's MB/s shown is from its pair with ctxguard; ${(m.params.solo ?? []).join(', ') || 'no library'} runs alone (its ratio is the ratio of medians: it is an order of magnitude slower, far beyond the load noise the pairing removes); an input on which it was over the cap or slower than the budget is not measured again in the later pairs. MB = 10^6 bytes of UTF-8. A warm-up call that does not return within ${m.params.capMs / 1000} s is abandoned (process/browser killed) and shown as "> cap" with an upper bound on MB/s. [n=…] marks cells with fewer than 3 runs.`);
  n.push(`Chat: ${m.inputs.files.chat.messages} OpenAI-format messages (user/assistant turns, assistant tool_calls with JSON arguments, tool outputs: logs, JSON, file listings, code), ${m.inputs.files.chat.strings} strings, ${(m.inputs.files.chat.bytes / 1e6).toFixed(2)} MB of text; "per message" counts each message's content and each tool call's name and arguments separately (${m.chatTokens ?? '?'} o200k tokens in all). ctxguard's countMessages and ContextGuard.measure each run in ${m.params.extrasSamples ?? 1} fresh processes/pages with model gpt-4o (o200k) or gpt-4 (cl100k) (the table shows the first one's figures; the first call ÷ baseline is also given as the median over all of them, which is what the target row uses): first countTokens on every message of another conversation (variant 1) warms the code up and builds the vocabulary; then the API on conversation variant 0 (cold per-message cache), again on the same messages, and for the guard after appending one new user message (${m.params.extrasRuns} times, growing), then a new guard on a third conversation (variant 2) with the code warm, against countTokens on its strings; last the baseline: countTokens on each of variant 0's strings, one by one, in the same process — "counting its text once" (issue #7: measure from cold ≤ 1.1× that, after +1 message ≤ 5 ms).`);
  n.push(`Cold start: Node — a fresh \`node --input-type=module -e\` per sample, from before the library's \`import\` to after the first count of a short sentence returns (the harness's own modules are imported first, not timed); Chromium — a new browser context and page per sample, from before the library's \`import\` to after the first count, as in Node (runs before 2026-11-30 10:00 timed from navigation start, which adds the page's own loading to every library; that figure is still given below the table). Samples are interleaved across libraries.`);
  n.push(`Memory: a fresh \`node --expose-gc\` process per sample; deltas of process.memoryUsage() after gc() against a baseline taken after the harness and the 1 MB prose were loaded. ctxguard's and tiktoken's wasm linear memory shows in RSS, not in heap/external/arrayBuffers: compare RSS. "Held" is the same process 0.5 s after the first count (gc() again): right after it, V8 may still be compiling a function the first count made hot on a background thread, whose working memory is in RSS until it finishes (seen with ctxguard's counting-only builds: 16–20 MB right after, 15.7 MB held; gpt-tokenizer and the full builds the same either way). The target row uses the held figure; both are shown.`);
  n.push(`Download: every file the Chromium cold-start page fetched from node_modules or pkg/ (harness files excluded), each gzipped with zlib level 9 in Node and summed — what a page that loads the library natively (ES modules, no bundler) downloads for one encoding. The brotli columns compress the same files with Node\'s brotli at quality 11 (what CDNs such as jsDelivr serve); issue #7\'s target is stated in gzip, and the brotli figures are shown because binary vocabulary data gains little from brotli while text (gpt-tokenizer\'s JS rank tables) gains a lot.`);
  n.push('gpt-tokenizer 4.x ships no dist/ UMD bundle any more: its per-encoding entry `esm/encoding/<enc>.js` is loaded as native ES modules, and the download is that module graph as published (unminified, so a bundler would make it smaller).');
  n.push("js-tiktoken's ESM imports `base64-js`, which ships only CommonJS: the benchmark's server serves base64-js's own code, unchanged, inside a 3-line CommonJS-to-ESM wrapper (what a bundler does) and the import map points `base64-js` at it.");
  n.push("tiktoken in the browser: `tiktoken/lite/init` imports `./tiktoken_bg` without an extension; the import map maps that URL to `tiktoken_bg.js`; the wasm is instantiated with `WebAssembly.instantiateStreaming(fetch(…))` and the ranks are the package's `encoders/<enc>.json` (JSON module import). In Node, `tiktoken/lite` (CommonJS) and the same JSON.");
  n.push(`ctxguard: ${m.ctxguard.describe}.`);
  n.push(`Machine load: load average ${m.loadStart.map((x) => x.toFixed(2)).join(' / ')} at start, ${m.loadEnd.map((x) => x.toFixed(2)).join(' / ')} at the end (1/5/15 min) on ${m.nproc} cores shared with other sessions: absolute figures move between runs, ratios measured in the same run are what to compare.`);
  return n;
}

export function renderMarkdown(results) {
  const m = results.meta;
  const { runtimes, libs, encodings, ids } = m.selection;
  const out = [];
  out.push(`Generated by \`${m.command}\` on ${m.date} (${m.mode} run, ${(m.durationMs / 60000).toFixed(1)} min).`);
  out.push('');
  out.push(`Machine: ${m.nproc} cores (${m.cpu}), ${m.os}; Node ${m.node}; ${m.chromium ?? 'Chromium not run'}. ctxguard ${m.ctxguard.version} (commit ${m.ctxguard.commit}${m.ctxguard.dirty ? ', work tree modified' : ''}); ${Object.entries(m.peers).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  out.push('');
  out.push('### Headline: ctxguard throughput ÷ gpt-tokenizer throughput (> 1 means ctxguard is faster)');
  out.push('');
  out.push(headlineTable(results, runtimes, encodings, ids));
  out.push('');
  const ha = headlineAgainTable(results, runtimes, encodings, ids);
  if (ha) {
    out.push('The same ratio when both count text they have just counted (gpt-tokenizer\'s piece cache warm; see "Same text counted again"):');
    out.push('');
    out.push(ha);
    out.push('');
  }
  out.push('### Issue #7 targets, as measured in this run');
  out.push('');
  out.push(targetsTable(results, runtimes, encodings, ids));
  out.push('');
  for (const rt of runtimes) {
    const t = throughputTable(results, rt, libs, encodings, ids);
    if (!t) continue;
    out.push(`### Throughput, ${RT_LABEL[rt]} (median MB/s; in parentheses ÷ gpt-tokenizer)`);
    out.push('');
    out.push(t);
    out.push('');
  }
  const at = againTable(results, runtimes, libs, encodings, ids);
  if (at) {
    out.push('### Same text counted again (MB/s; in parentheses ÷ the same library on unseen text)');
    out.push('');
    out.push('Counting the text just counted, as naive benchmarks do: a per-piece cache (gpt-tokenizer keeps 100,000 pieces) then answers most pieces. The tables above count text not seen before.');
    out.push('');
    out.push(at);
    out.push('');
  }
  out.push(`### ctxguard on the whole conversation (${m.inputs.files.chat.messages} messages)`);
  out.push('');
  out.push(chatExtrasTable(results, runtimes, encodings));
  out.push('');
  const cx = results.chatExtras;
  const totals = [];
  for (const rt of runtimes) {
    for (const enc of encodings) {
      const x = cx?.[rt]?.[enc];
      if (x?.countMessages?.total != null) totals.push(`${RT_LABEL[rt]} ${ENC_SHORT[enc]}: countMessages total ${x.countMessages.total}${x.guard?.usedTokens != null ? `, measure usedTokens ${x.guard.usedTokens}` : ''}`);
      for (const k of ['countMessages', 'guard']) if (x?.[k]?.error) totals.push(`${RT_LABEL[rt]} ${ENC_SHORT[enc]} ${k}: ${x[k].error}`);
    }
  }
  if (totals.length) out.push(totals.map((t) => `- ${t}`).join('\n'), '');
  out.push('### Cold start: import + first count (median; in parentheses ÷ gpt-tokenizer)');
  out.push('');
  out.push(coldTable(results, runtimes, libs, encodings));
  out.push('');
  const hm = harnessLoad(results, runtimes);
  if (hm) out.push(hm, '');
  const nav = sinceNavigation(results, libs, encodings);
  if (nav) out.push(nav, '');
  const mt = memoryTable(results, libs, encodings);
  if (mt) {
    out.push('### Memory in Node after loading one encoding (median of fresh processes)');
    out.push('');
    out.push(mt);
    out.push('');
  }
  const dt = downloadTable(results, libs, encodings);
  if (dt) {
    out.push('### Download per encoding (what the browser fetched, gzip -9 per file)');
    out.push('');
    out.push(dt);
    out.push('');
    out.push(downloadDetails(results, libs, encodings));
    out.push('');
  }
  const ag = agreement(results, runtimes, libs, encodings, ids);
  out.push('### Count agreement (each counter\'s first-call count against the reference; "=" equal; for the chat also every per-message count)');
  out.push('');
  out.push(ag.table);
  out.push('');
  out.push(ag.mismatches.length ? `**${ag.mismatches.length} mismatch(es)** — see the bold cells.` : 'No mismatch: every counter that finished gave the same count on every input, in both runtimes.');
  if (ag.lonely.length) out.push('', `Only one library finished (nothing to compare with within the cap): ${ag.lonely.join(', ')}.`);
  out.push('');
  out.push('### Observations (computed from this run)');
  out.push('');
  for (const o of observations(results, runtimes, libs, encodings, ids)) out.push(`- ${o}`);
  out.push('');
  out.push('### Notes');
  out.push('');
  for (const n of notes(results)) out.push(`- ${n}`);
  out.push('');
  out.push('Inputs (generated by `benches/lib/inputs.mjs`, seeded, no downloaded data):');
  out.push('');
  out.push(table(['input', 'bytes', 'sha256 (first 16)'], ids.map((id) => [INPUTS.find((x) => x.id === id).label, String(m.inputs.files[id].bytes), m.inputs.files[id].sha256.slice(0, 16)])));
  out.push('');
  return out.join('\n');
}
