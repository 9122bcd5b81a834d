// Claude's estimate against an offline reconstruction of Claude's tokenizer (ctok).
//
//   node benches/claude-estimate/run.mjs [--python PATH] [--factor F ...] [--write]
//
// Counts every text of the corpus (corpus.mjs) as one user message twice: with ctxguard's
// estimate for a Claude model of each tokenizer family (the built package in pkg/,
// `countMessages`) and with ctok's
// reconstruction (ctok_counts.py, run by PATH, default $CTOK_PYTHON or python3: CPython >= 3.12
// with ctok installed). Prints, per kind of content, the ratio estimate / reconstruction per
// message (lowest, median, highest) and over all the kind's messages together; then the same
// for other estimate factors (`--factor`, computed from the o200k count by the estimate's own
// formula, checked against the package on every text first, to within one token). Then the Claude 5.x
// models (CLAUDE_5), which no ctok family was measured against: their counts under ctok's version
// strings for them (checked equal to v4.8's on every text) and the estimate each gets from the
// table today. `--write` replaces the generated part of docs/claude-estimate.md.

import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { countMessages, countTokens, modelInfo } from 'ctxguard';
import { buildCorpus } from './corpus.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

/**
 * ctok's families: the models each covers (ctok's README), its single-message frame, and the
 * model whose estimate is measured against it.
 */
const FAMILIES = [
  { version: '3.0', models: 'Claude 3 to Opus 4.6', frame: 7, model: 'claude-sonnet-4-5' },
  { version: '4.7', models: 'Opus 4.7', frame: 7, model: 'claude-opus-4-7' },
  { version: '4.8', models: 'Opus 4.8, Sonnet 5, Fable 5', frame: 6, model: 'claude-opus-4-8' },
];
/**
 * The Claude 5.x models. ctok (1.3.0) measured none of them: it names Opus 4.8, Sonnet 5 and
 * Fable 5 for its v4.8 family and routes every version from 4.8 on to it. Anthropic's pages give
 * each the tokenizer introduced with Opus 4.7 (`tokenizer`, quoted in docs/claude-estimate.md):
 * v4.7's vocabulary, which v4.8 reuses. So their figures are v4.8's, inherited, not measured.
 * `ctok` is the version string asked of ctok for the model.
 */
const CLAUDE_5 = [
  { model: 'claude-fable-5-1', ctok: '5.1', tokenizer: "Opus 4.7's" },
  { model: 'claude-mythos-5-1', ctok: '5.1', tokenizer: "Fable 5.1's (the same model)" },
  { model: 'claude-fable-5-2', ctok: '5.2', tokenizer: "Opus 4.7's" },
  { model: 'claude-mythos-5-2', ctok: '5.2', tokenizer: "Fable 5.2's" },
  { model: 'claude-opus-5-5', ctok: '5.5', tokenizer: "Opus 4.7's" },
  { model: 'claude-sonnet-5-5', ctok: '5.5', tokenizer: "Sonnet 5's" },
  { model: 'claude-haiku-5-5', ctok: '5.5', tokenizer: "Claude 4.7 and later models'" },
];
/** The ctok family the Claude 5.x figures are taken from. */
const CLAUDE_5_FAMILY = '4.8';
/** ctxguard's framing of one user message in the estimate: 4 per message + 3 to prime the reply. */
const EST_FRAME = 7;
/** The kinds whose text is English, source code or JSON (the rest: other natural languages). */
const isCore = (kind) => !kind.startsWith('chat-') && kind !== 'zh-notes';

function args(argv) {
  const o = { python: process.env.CTOK_PYTHON || 'python3', factors: [], write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--python') o.python = argv[++i];
    else if (argv[i] === '--factor') o.factors.push(Number(argv[++i]));
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return o;
}

function reconstruct(python, texts, versions) {
  const input = texts.map((text, i) => JSON.stringify({ i, text })).join('\n') + '\n';
  const r = spawnSync(python, [path.join(here, 'ctok_counts.py'), ...versions], { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${python} ctok_counts.py failed (${r.status}): ${r.stderr || r.error}`);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const meta = lines.shift().meta;
  const counts = new Array(texts.length);
  for (const l of lines) counts[l.i] = l;
  return { meta, counts };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
};
const fmt = (x) => x.toFixed(3);
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** Ratios estimate / reconstruction for `items` with the estimate `est(item)` and family `f`. */
function stats(items, est, f) {
  const ratios = items.map((it) => est(it) / it.recon[f.version]);
  const sumEst = items.reduce((a, it) => a + est(it), 0);
  const sumRec = items.reduce((a, it) => a + it.recon[f.version], 0);
  return { n: items.length, min: Math.min(...ratios), p10: quantile(ratios, 0.1), median: quantile(ratios, 0.5), max: Math.max(...ratios), total: sumEst / sumRec, tokens: sumRec };
}

function main() {
  const o = args(process.argv.slice(2));
  for (const f of FAMILIES) f.factor = modelInfo(f.model).estimateFactor;
  for (const m of CLAUDE_5) m.factor = modelInfo(m.model).estimateFactor;
  const kinds = buildCorpus(root);
  const items = kinds.flatMap((k) => k.texts.map((text) => ({ kind: k.kind, text })));
  const t0 = performance.now();
  const versions = [...new Set([...FAMILIES.map((f) => f.version), ...CLAUDE_5.map((m) => m.ctok)])];
  const { meta, counts } = reconstruct(o.python, items.map((it) => it.text), versions);
  const reconMs = performance.now() - t0;
  for (const [i, it] of items.entries()) {
    it.recon = counts[i];
    it.o200k = countTokens(it.text, { encoding: 'o200k_base' });
    it.est = {};
    for (const f of FAMILIES) {
      const est = countMessages([{ role: 'user', content: it.text }], { model: f.model }).total;
      // The formula used for other factors must be the package's own at the table's factor (to
      // within one token: text between attachment markers is scaled, and rounded up, on its own).
      const formula = EST_FRAME + Math.ceil(it.o200k * f.factor);
      if (Math.abs(formula - est) > 1) throw new Error(`estimate formula ${formula} != countMessages ${est} for a ${it.kind} text`);
      it.est[f.version] = est;
    }
    for (const m of CLAUDE_5) {
      const est = countMessages([{ role: 'user', content: it.text }], { model: m.model }).total;
      const formula = EST_FRAME + Math.ceil(it.o200k * m.factor);
      if (Math.abs(formula - est) > 1) throw new Error(`estimate formula ${formula} != countMessages ${est} for ${m.model}, a ${it.kind} text`);
    }
  }
  const byKind = kinds.map((k) => ({ ...k, items: items.filter((it) => it.kind === k.kind) }));
  const estAt = (F) => (it) => EST_FRAME + Math.ceil(it.o200k * F);
  const out = [];
  const line = (s = '') => out.push(s);

  line(`Corpus: ${items.length} messages in ${kinds.length} kinds, ${items.reduce((a, it) => a + it.text.length, 0).toLocaleString('en')} characters. ` +
    `Reconstruction: ctok ${meta.ctok} on Python ${meta.python} (Unicode ${meta.unicode}, regex ${meta.regex}), ${(reconMs / 1000).toFixed(0)} s. ` +
    `Estimates: ctxguard \`countMessages\` for ${FAMILIES.map((f) => `\`${f.model}\` (factor ${f.factor.toFixed(3)} of the o200k count)`).join(', ')}.`);
  line();
  for (const f of FAMILIES) {
    line(`#### Claude tokenizer v${f.version} (${f.models}): \`${f.model}\`'s estimate (${f.factor.toFixed(3)}) / reconstruction`);
    line();
    line('| kind | messages | reconstructed tokens | lowest | 10th pct | median | highest | all messages | reconstruction / o200k (content, median) |');
    line('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const k of byKind) {
      const s = stats(k.items, (it) => it.est[f.version], f);
      const content = quantile(k.items.map((it) => (it.recon[f.version] - f.frame) / it.o200k), 0.5);
      line(`| ${k.label} | ${s.n} | ${s.tokens.toLocaleString('en')} | ${fmt(s.min)} | ${fmt(s.p10)} | ${fmt(s.median)} | ${fmt(s.max)} | ${fmt(s.total)} | ${fmt(content)} |`);
    }
    const all = stats(items, (it) => it.est[f.version], f);
    line(`| **every message** | ${all.n} | ${all.tokens.toLocaleString('en')} | ${fmt(all.min)} | ${fmt(all.p10)} | ${fmt(all.median)} | ${fmt(all.max)} | ${fmt(all.total)} | |`);
    line();
  }
  line('#### The lowest English, code and JSON messages at the table\'s factor');
  line();
  line('| family | ratio | kind | reconstructed tokens | starts with |');
  line('|---|---:|---|---:|---|');
  for (const f of FAMILIES) {
    const low = items.filter((it) => isCore(it.kind)).map((it) => ({ it, r: it.est[f.version] / it.recon[f.version] })).sort((a, b) => a.r - b.r).slice(0, 3);
    for (const { it, r } of low) {
      const head = it.text.slice(0, 48).replace(/\s+/g, ' ').replace(/[|`]/g, (c) => `\\${c}`);
      line(`| v${f.version} | ${fmt(r)} | ${it.kind} | ${it.recon[f.version]} | ${head} |`);
    }
  }
  line();
  for (const f of FAMILIES) {
    const factors = [...new Set([f.factor, ...o.factors])].sort((a, b) => a - b);
    line(`#### Other factors, v${f.version}: the worst undercount and the cost in overcount`);
    line();
    line('| factor | English, code, JSON: lowest message | lowest kind | median message | all | other languages: lowest kind | all |');
    line('|---:|---:|---:|---:|---:|---:|---:|');
    for (const F of factors) {
      const row = [];
      for (const core of [true, false]) {
        const group = items.filter((it) => isCore(it.kind) === core);
        const s = stats(group, estAt(F), f);
        const worst = byKind.filter((k) => isCore(k.kind) === core).map((k) => ({ k, s: stats(k.items, estAt(F), f) })).sort((a, b) => a.s.total - b.s.total)[0];
        const kind = `${pct(worst.s.total - 1)} (${worst.k.kind})`;
        row.push(...(core ? [pct(s.min - 1), kind, pct(s.median - 1), pct(s.total - 1)] : [kind, pct(s.total - 1)]));
      }
      line(`| ${F.toFixed(3)}${F === f.factor ? ' (table)' : ''} | ${row.join(' | ')} |`);
    }
    line();
  }
  const f5 = FAMILIES.find((f) => f.version === CLAUDE_5_FAMILY);
  line('#### Claude 5.x: the table\'s estimate against v4.8 (inherited, not measured)');
  line();
  line(`ctok measured none of these models; the figures are those of its v${f5.version} family (${f5.models}), whose ` +
    'vocabulary Anthropic documents for each model (the tokenizer column). "ctok" is what ctok counts under the ' +
    'version string for the model, compared with v4.8 on every message.');
  line();
  line('| model | tokenizer (Anthropic) | ctok | factor in the table | English, code, JSON: closest kind | lowest single message | overcount, all messages | other languages: together | lowest kind | highest kind |');
  line('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const m of CLAUDE_5) {
    const same = items.filter((it) => it.recon[m.ctok] === it.recon[f5.version]).length;
    const est = estAt(m.factor);
    const core = items.filter((it) => isCore(it.kind));
    const other = items.filter((it) => !isCore(it.kind));
    const kindsBy = (c) => byKind.filter((k) => isCore(k.kind) === c).map((k) => ({ k, s: stats(k.items, est, f5) })).sort((a, b) => a.s.total - b.s.total);
    const coreKinds = kindsBy(true);
    const otherKinds = kindsBy(false);
    const lowCore = coreKinds[0];
    const lowOther = otherKinds[0];
    const highOther = otherKinds[otherKinds.length - 1];
    line(`| \`${m.model}\` | ${m.tokenizer} | ${m.ctok}: ${same} of ${items.length} = v${f5.version} | ${m.factor.toFixed(3)} | ` +
      `${pct(lowCore.s.total - 1)} (${lowCore.k.kind}) | ${pct(stats(core, est, f5).min - 1)} | ${pct(stats(core, est, f5).total - 1)} | ` +
      `${pct(stats(other, est, f5).total - 1)} | ${pct(lowOther.s.total - 1)} (${lowOther.k.kind}) | ${pct(highOther.s.total - 1)} (${highOther.k.kind}) |`);
  }
  line();
  const text = out.join('\n');
  console.log(text);
  if (o.write) {
    const doc = path.join(root, 'docs', 'claude-estimate.md');
    const start = '<!-- generated by benches/claude-estimate/run.mjs: start -->';
    const end = '<!-- generated by benches/claude-estimate/run.mjs: end -->';
    const cur = fs.readFileSync(doc, 'utf8');
    const a = cur.indexOf(start);
    const b = cur.indexOf(end);
    if (a < 0 || b < a) throw new Error(`${doc} has no generated section`);
    fs.writeFileSync(doc, `${cur.slice(0, a + start.length)}\n\n${text}\n\n${cur.slice(b)}`);
    console.error(`wrote ${path.relative(root, doc)}`);
  }
}

main();
