// The budget bar, the limit figures and the per-source breakdown, drawn from the model-visible
// ContextMetrics (what guardSources() returned), with the raw view's figures next to them.

import { fill, fmt, h, pct } from './dom.js';

/** The sources of SourceBreakdown, in the order they stack in the bar. */
export const SOURCES = [
  ['system', 'System'],
  ['toolDefinitions', 'Tool definitions'],
  ['user', 'User'],
  ['assistant', 'Assistant'],
  ['toolOutputs', 'Tool outputs'],
  ['attachments', 'Attachments'],
  ['images', 'Images'],
  ['summary', 'Summary'],
  ['framing', 'Framing'],
];

/** Icon, label and an explanation with the distance to the next threshold, per state. */
const STATES = {
  ok: ['✓', 'OK', (m) => `${fmt(m.triggerLimit - m.usedTokens)} tokens below the trigger`],
  near_trigger: ['!', 'Near trigger', (m) => `${fmt(m.triggerLimit - m.usedTokens)} tokens until compaction starts`],
  over_trigger: ['▲', 'Over trigger', (m) => `${fmt(m.usedTokens - m.triggerLimit)} over; the guard would compact toward ${fmt(m.targetLimit)}`],
  over_limit: ['✕', 'Over limit', (m) => `${fmt(m.usedTokens - m.usableLimit)} tokens more than the usable limit`],
};

/** Width (in % of the bar) of `tokens` on a bar whose full length is `scale` tokens. */
const w = (tokens, scale) => `${Math.max(0, Math.min(100, (tokens / scale) * 100))}%`;

/**
 * @param m   metrics of the model-visible view
 * @param raw metrics of the raw view (optional): its total and what the source guards saved
 */
export function renderBudget(root, m, raw = null) {
  const [icon, label, explain] = STATES[m.state] ?? ['?', m.state, () => ''];
  const why = explain(m);
  const b = m.breakdown;
  // The bar spans the context window (or the used tokens, when they exceed it).
  const scale = Math.max(m.contextWindow, m.usedTokens);
  const physical = m.contextWindow - m.reservedOutputTokens;
  const segments = [];
  let at = 0;
  for (const [key, name] of SOURCES) {
    if (b[key] > 0) {
      segments.push(h('span', { class: `seg src-${key}`, style: { left: w(at, scale), width: w(b[key], scale) }, title: `${name}: ${fmt(b[key])} tokens` }));
      at += b[key];
    }
  }
  const saved = raw ? raw.usedTokens - m.usedTokens : 0;
  // What the source guards took out, as a ghost after the model-visible segments.
  if (saved > 0) segments.push(h('span', { class: 'seg saved', style: { left: w(m.usedTokens, scale), width: w(saved, scale) }, title: `Raw view: ${fmt(raw.usedTokens)} tokens; ${fmt(saved)} not sent (source guards)` }));
  const economicCap = m.usableLimit < physical;
  const marker = (cls, tokens, text, title) => h('span', { class: `marker ${cls}`, style: { left: w(tokens, scale) }, title });
  const tag = (cls, tokens, text, below = false) =>
    h('span', { class: `marker-label ${cls}`, 'data-at': tokens / scale, 'data-below': below ? '1' : null }, text);
  const summary =
    `${fmt(m.usedTokens)} of ${fmt(m.usableLimit)} usable tokens used (${pct(m.usedRatio)}); ` +
    `trigger at ${fmt(m.triggerLimit)}, target ${fmt(m.targetLimit)}, ` +
    `${fmt(m.reservedOutputTokens)} reserved for output in a ${fmt(m.contextWindow)}-token window.`;

  fill(
    root,
    h('div', { class: 'budget-head' },
      h('div', { class: 'used' },
        h('span', { id: 'used-tokens', class: 'big', 'data-value': m.usedTokens }, fmt(m.usedTokens)),
        h('span', { class: 'used-of' }, ' tokens used of ', h('strong', { id: 'usable-limit' }, fmt(m.usableLimit)), ' usable · ', h('span', { id: 'used-ratio' }, pct(m.usedRatio))),
        raw ? h('p', { class: 'raw-total' },
          h('span', { class: 'view-tag' }, 'model-visible'), ' raw view ',
          h('strong', { id: 'raw-tokens', 'data-value': raw.usedTokens }, fmt(raw.usedTokens)), ' tokens · ',
          h('span', { id: 'saved-tokens', class: saved > 0 ? 'saved' : null, 'data-value': saved },
            saved > 0 ? [h('span', { class: 'swatch saved', 'aria-hidden': 'true' }), ` ${fmt(saved)} saved by the source guards (${pct(saved / Math.max(1, raw.usedTokens))})`] : 'nothing cut by the source guards')) : null),
      h('p', { id: 'state', class: `state state-${m.state}`, 'data-state': m.state },
        h('span', { class: 'state-icon', 'aria-hidden': 'true' }, icon), h('strong', {}, label), h('span', { class: 'state-why' }, ` — ${why}`))),
    h('div', { class: 'bar', role: 'img', 'aria-label': summary },
      h('div', { class: 'track' },
        segments,
        economicCap ? h('span', { class: 'seg capped', style: { left: w(m.usableLimit, scale), width: w(physical - m.usableLimit, scale) }, title: 'Beyond the economic budget' }) : null,
        h('span', { class: 'seg reserved', style: { left: w(physical, scale), width: w(m.reservedOutputTokens, scale) }, title: `Reserved output: ${fmt(m.reservedOutputTokens)} tokens` }),
        m.usedTokens > m.usableLimit ? h('span', { class: 'seg over', style: { left: w(m.usableLimit, scale), width: w(m.usedTokens - m.usableLimit, scale) }, title: `${fmt(m.usedTokens - m.usableLimit)} tokens over the usable limit` }) : null,
        marker('target', m.targetLimit, 'Compaction aims to get under this'),
        marker('trigger', m.triggerLimit, 'Compaction starts above this'),
        marker('usable', m.usableLimit, 'The usable input limit'),
        scale > m.contextWindow ? marker('window', m.contextWindow, 'End of the context window') : null,
        tag('target', m.targetLimit, `target ${fmt(m.targetLimit)}`),
        tag('trigger', m.triggerLimit, `trigger ${fmt(m.triggerLimit)}`),
        tag('usable', m.usableLimit, `usable ${fmt(m.usableLimit)}`, true),
        scale > m.contextWindow ? tag('window', m.contextWindow, `window ${fmt(m.contextWindow)}`, true) : null),
      h('div', { class: 'scale', 'aria-hidden': 'true' }, h('span', {}, '0'), h('span', {}, `${fmt(scale)} ${scale === m.contextWindow ? 'window' : 'used'}`))),
    h('dl', { class: 'figures' },
      fig('Context window', fmt(m.contextWindow)),
      fig('Reserved output', fmt(m.reservedOutputTokens), 'swatch reserved'),
      fig('Usable limit', fmt(m.usableLimit), null, economicCap ? 'capped by the economic budget' : 'window − reserved output'),
      fig('Trigger limit', fmt(m.triggerLimit), 'swatch trigger'),
      fig('Target limit', fmt(m.targetLimit), 'swatch target'),
      fig('Remaining', `${fmt(m.remainingTokens)}`, null, pct(m.remainingRatio), 'remaining-tokens'),
      costFigure(m)),
  );
  layoutBar(root);
}

/**
 * Lay the marker labels out once the bar has a width: each label sits next to its line (after it
 * when there is room, else before it), inside the bar's ends, and moves up (or down) a row
 * instead of overlapping a neighbour.
 */
function placeLabels(track) {
  const width = track.clientWidth;
  if (width === 0) return;
  for (const below of [false, true]) {
    const labels = [...track.querySelectorAll('.marker-label')].filter((l) => (l.dataset.below === '1') === below);
    const rows = [];
    labels
      .map((el) => ({ el, x: Number(el.dataset.at) * width, w: el.offsetWidth }))
      .sort((a, b) => a.x - b.x)
      .forEach(({ el, x, w: lw }) => {
        // Above the bar a label follows its line; below, it precedes it (the scale's end is on the right).
        const after = below ? x - lw - 4 < 0 : x + lw + 6 <= width;
        let left = after ? x + 4 : x - lw - 4;
        left = Math.max(0, Math.min(width - lw, left));
        let row = rows.findIndex((end) => left >= end + 8);
        if (row === -1) row = rows.length;
        rows[row] = left + lw;
        el.style.left = `${left}px`;
        el.style.setProperty('--row', String(row));
      });
    track.parentElement.style.setProperty(below ? '--rows-below' : '--rows-above', String(Math.max(1, rows.length)));
  }
}

const observed = new WeakSet();
const resizes = typeof ResizeObserver === 'function' ? new ResizeObserver((entries) => entries.forEach((e) => placeLabels(e.target))) : null;

function layoutBar(root) {
  const track = root.querySelector('.track');
  placeLabels(track);
  if (resizes && !observed.has(track)) {
    observed.add(track);
    resizes.observe(track);
  }
}

function fig(label, value, swatch = null, note = null, id = null) {
  return h('div', { class: 'fig' },
    h('dt', {}, swatch ? h('span', { class: swatch, 'aria-hidden': 'true' }) : null, label),
    h('dd', { id }, value, note ? h('small', {}, note) : null));
}

/** Count kind line: "Exact · o200k_base", "Estimate · o200k_base × 1.32 …" or "Calibrated · …". */
export function kindText(m, model) {
  if (m.countSource === 'calibrated' && m.calibration) {
    const c = m.calibration;
    return { badge: 'Calibrated', detail: `${m.encoding} × ${c.correction.toFixed(3)} · learned from ${c.observations} provider report${c.observations === 1 ? '' : 's'}` };
  }
  if (m.kind === 'exact') return { badge: 'Exact', detail: `${m.encoding} · the provider's own tokenizer` };
  const factor = model?.estimateFactor && model.estimateFactor !== 1 ? ` × ${model.estimateFactor.toFixed(2)}` : '';
  return { badge: 'Estimate', detail: `${m.encoding}${factor} · no public tokenizer, counted with a safety margin` };
}

/** "$0.0123" with enough digits for small figures. */
export function usd(v) {
  return `$${v >= 1 ? v.toFixed(2) : v >= 0.01 ? v.toFixed(4) : v.toPrecision(2)}`;
}

/** The estimated cost of the next request (metrics.cost), or why there is none. */
function costFigure(m) {
  const c = m.cost;
  if (!c) return fig('Next request', '—', null, 'no price for this model', 'next-cost');
  // The output side is priced at the whole reserved output: the figure is an upper bound.
  const asOf = c.pricesAsOf ? ` · prices of ${c.pricesAsOf.replaceAll('-', '\u2011')}` : '';
  const note = `${fmt(c.cachedInputTokens)} cached + ${fmt(c.uncachedInputTokens)} uncached input, output up to ${fmt(c.outputTokens)}${asOf}`;
  return fig('Next request, at most', usd(c.totalUsd), null, note, 'next-cost');
}

/** @param raw metrics of the raw view (optional): sources the guards shrank show their raw size too */
export function renderBreakdown(root, m, model, raw = null) {
  const kind = kindText(m, model);
  const max = Math.max(1, ...SOURCES.map(([k]) => Math.max(m.breakdown[k], raw?.breakdown[k] ?? 0)));
  fill(
    root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Where the tokens go ', h('span', { class: 'muted' }, raw ? '(model-visible)' : '')),
      h('p', { class: 'kind' },
        h('span', { id: 'count-kind', class: `badge kind-${m.kind}`, 'data-source': m.countSource }, kind.badge), ' ',
        h('span', { id: 'encoding', 'data-encoding': m.encoding }, kind.detail), ' · ',
        h('span', { id: 'message-count' }, `${fmt(m.messageCount)} message${m.messageCount === 1 ? '' : 's'}`))),
    h('table', { class: 'breakdown' },
      h('caption', { class: 'sr-only' }, 'Tokens per source'),
      h('thead', { class: 'sr-only' }, h('tr', {}, h('th', { scope: 'col' }, 'Source'), h('th', { scope: 'col' }, 'Share'), h('th', { scope: 'col' }, 'Raw tokens'), h('th', { scope: 'col' }, 'Model-visible tokens'), h('th', { scope: 'col' }, 'Percent'))),
      h('tbody', {},
        SOURCES.map(([key, name]) => {
          const v = m.breakdown[key];
          const r = raw?.breakdown[key] ?? v;
          return h('tr', { class: v === 0 ? 'zero' : null, 'data-source': key, 'data-raw': r !== v ? r : null },
            h('th', { scope: 'row' }, h('span', { class: `swatch src-${key}`, 'aria-hidden': 'true' }), name),
            h('td', { class: 'hbar' },
              r !== v ? h('span', { class: `ghost src-${key}`, style: { width: w(r, max) }, title: `Raw view: ${fmt(r)} tokens` }) : null,
              h('span', { class: `src-${key}`, style: { width: w(v, max) } })),
            h('td', { class: 'raw-num' }, r !== v ? [h('s', {}, fmt(r)), ' →'] : null),
            h('td', { class: 'num' }, fmt(v)),
            h('td', { class: 'num pct' }, m.usedTokens > 0 ? pct(v / m.usedTokens) : '—'));
        }))),
  );
}
