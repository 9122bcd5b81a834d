// The budget bar, the limit figures and the per-source breakdown, drawn from one ContextMetrics.

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

const STATES = {
  ok: ['✓', 'OK', 'under the trigger limit'],
  near_trigger: ['!', 'Near trigger', 'compaction will start soon'],
  over_trigger: ['▲', 'Over trigger', 'the guard would compact before the next call'],
  over_limit: ['✕', 'Over limit', 'the request does not fit the usable limit'],
};

/** Width (in % of the bar) of `tokens` on a bar whose full length is `scale` tokens. */
const w = (tokens, scale) => `${Math.max(0, Math.min(100, (tokens / scale) * 100))}%`;

export function renderBudget(root, m) {
  const [icon, label, why] = STATES[m.state] ?? ['?', m.state, ''];
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
  const economicCap = m.usableLimit < physical;
  const marker = (cls, tokens, text, title) =>
    h('span', { class: `marker ${cls}`, style: { left: w(tokens, scale) }, title }, h('span', { class: 'marker-label' }, text));
  const summary =
    `${fmt(m.usedTokens)} of ${fmt(m.usableLimit)} usable tokens used (${pct(m.usedRatio)}); ` +
    `trigger at ${fmt(m.triggerLimit)}, target ${fmt(m.targetLimit)}, ` +
    `${fmt(m.reservedOutputTokens)} reserved for output in a ${fmt(m.contextWindow)}-token window.`;

  fill(
    root,
    h('div', { class: 'budget-head' },
      h('div', { class: 'used' },
        h('span', { id: 'used-tokens', class: 'big', 'data-value': m.usedTokens }, fmt(m.usedTokens)),
        h('span', { class: 'used-of' }, ' tokens used of ', h('strong', { id: 'usable-limit' }, fmt(m.usableLimit)), ' usable · ', h('span', { id: 'used-ratio' }, pct(m.usedRatio)))),
      h('p', { id: 'state', class: `state state-${m.state}`, 'data-state': m.state },
        h('span', { class: 'state-icon', 'aria-hidden': 'true' }, icon), h('strong', {}, label), h('span', { class: 'state-why' }, ` — ${why}`))),
    h('div', { class: 'bar', role: 'img', 'aria-label': summary },
      h('div', { class: 'track' },
        segments,
        economicCap ? h('span', { class: 'seg capped', style: { left: w(m.usableLimit, scale), width: w(physical - m.usableLimit, scale) }, title: 'Beyond the economic budget' }) : null,
        h('span', { class: 'seg reserved', style: { left: w(physical, scale), width: w(m.reservedOutputTokens, scale) }, title: `Reserved output: ${fmt(m.reservedOutputTokens)} tokens` }),
        marker('target', m.targetLimit, `target ${fmt(m.targetLimit)}`, 'Compaction aims to get under this'),
        marker('trigger', m.triggerLimit, `trigger ${fmt(m.triggerLimit)}`, 'Compaction starts above this'),
        marker('usable', m.usableLimit, `usable ${fmt(m.usableLimit)}`, 'The usable input limit'))),
    h('div', { class: 'scale', 'aria-hidden': 'true' }, h('span', {}, '0'), h('span', {}, `${fmt(scale)} ${scale === m.contextWindow ? 'window' : 'used'}`)),
    h('dl', { class: 'figures' },
      fig('Context window', fmt(m.contextWindow)),
      fig('Reserved output', fmt(m.reservedOutputTokens), 'swatch reserved'),
      fig('Usable limit', fmt(m.usableLimit), null, economicCap ? 'capped by the economic budget' : 'window − reserved output'),
      fig('Trigger limit', fmt(m.triggerLimit), 'swatch trigger'),
      fig('Target limit', fmt(m.targetLimit), 'swatch target'),
      fig('Remaining', `${fmt(m.remainingTokens)}`, null, pct(m.remainingRatio), 'remaining-tokens')),
  );
}

function fig(label, value, swatch = null, note = null, id = null) {
  return h('div', { class: 'fig' },
    h('dt', {}, swatch ? h('span', { class: swatch, 'aria-hidden': 'true' }) : null, label),
    h('dd', { id }, value, note ? h('small', {}, note) : null));
}

/** Count kind line: "Exact · o200k_base" or "Estimate · o200k_base × 1.32 …". */
export function kindText(m, model) {
  if (m.kind === 'exact') return { badge: 'Exact', detail: `${m.encoding} · the provider's own tokenizer` };
  const factor = model?.estimateFactor && model.estimateFactor !== 1 ? ` × ${model.estimateFactor.toFixed(2)}` : '';
  return { badge: 'Estimate', detail: `${m.encoding}${factor} · no public tokenizer, counted with a safety margin` };
}

export function renderBreakdown(root, m, model) {
  const kind = kindText(m, model);
  const max = Math.max(1, ...SOURCES.map(([k]) => m.breakdown[k]));
  fill(
    root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Where the tokens go'),
      h('p', { class: 'kind' },
        h('span', { id: 'count-kind', class: `badge kind-${m.kind}` }, kind.badge), ' ',
        h('span', { id: 'encoding', 'data-encoding': m.encoding }, kind.detail), ' · ',
        h('span', { id: 'message-count' }, `${fmt(m.messageCount)} message${m.messageCount === 1 ? '' : 's'}`))),
    h('table', { class: 'breakdown' },
      h('caption', { class: 'sr-only' }, 'Tokens per source'),
      h('thead', { class: 'sr-only' }, h('tr', {}, h('th', { scope: 'col' }, 'Source'), h('th', { scope: 'col' }, 'Share'), h('th', { scope: 'col' }, 'Tokens'), h('th', { scope: 'col' }, 'Percent'))),
      h('tbody', {},
        SOURCES.map(([key, name]) => {
          const v = m.breakdown[key];
          return h('tr', { class: v === 0 ? 'zero' : null, 'data-source': key },
            h('th', { scope: 'row' }, h('span', { class: `swatch src-${key}`, 'aria-hidden': 'true' }), name),
            h('td', { class: 'hbar' }, h('span', { class: `src-${key}`, style: { width: w(v, max) } })),
            h('td', { class: 'num' }, fmt(v)),
            h('td', { class: 'num pct' }, m.usedTokens > 0 ? pct(v / m.usedTokens) : '—'));
        }))),
  );
}
