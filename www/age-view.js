// "Tool outputs by age": each tool output of a conversation, newest first, with its age (user
// turns since it), what it became in the model input — verbatim, compacted, cleared to a stub,
// or summarized away — and its tokens before and after; the clearing steps of the
// `tool_output_clear` traces and the metrics' clearing breakdown. Drawn from what ctxguard
// returned (the model-visible messages, their counts, traces and metrics): the page decides
// nothing, it reads ctxguard's markers.

import { fill, fmt, h } from './dom.js';
import { changeKinds, messageText } from './sources-view.js';

/** Rows of the table drawn at first (the strip shows every output). */
const TABLE_ROWS = 24;
const STATE_LABEL = { verbatim: 'verbatim', compacted: 'compacted', cleared: 'cleared (stub)', summarized: 'summarized', replaced: 'in fallback note', changed: 'changed' };

/** What a tool output became, from its model-visible form (ctxguard's markers in it). */
function stateOf(raw, visible) {
  if (raw === visible) return 'verbatim';
  const kinds = changeKinds(messageText(visible));
  if (kinds.includes('cleared')) return 'cleared';
  if (kinds.includes('compacted')) return 'compacted';
  return JSON.stringify(raw) === JSON.stringify(visible) ? 'verbatim' : 'changed';
}

/**
 * The tool outputs of `rows` (rowsFor of the raw conversation), each matched with its row in the
 * model input: by position when both views line up, else by tool call (the `ref` of the row).
 */
export function toolOutputs(rows, counts, vrows, vcounts, gone = 'summarized') {
  const aligned = vrows.length === rows.length;
  const byRef = new Map();
  if (!aligned) vrows.forEach((v, j) => v.role === 'tool' && v.ref && byRef.set(v.ref, j));
  const per = counts?.perMessage ?? [];
  const vper = vcounts?.perMessage ?? [];
  const out = [];
  let turnsAfter = 0;
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (r.role === 'user') turnsAfter++;
    if (r.role !== 'tool') continue;
    const j = aligned ? i : (r.ref ? byRef.get(r.ref) : undefined);
    const v = j === undefined ? null : vrows[j];
    const state = v === null ? gone : stateOf(r.raw, v.raw);
    const stub = state === 'cleared' ? messageText(v.raw).split('\n').find((l) => l.includes('[ctxguard:cleared-tool-output]')) ?? '' : '';
    out.push({ index: i, age: turnsAfter, ref: r.ref ?? '', preview: r.preview, state, before: per[i] ?? null, after: v === null ? 0 : vper[j] ?? null, stub });
  }
  return out;
}

/** Above this many outputs, the strip draws one cell per run of outputs that became the same. */
const STRIP_CELLS = 200;

/** Cells of the strip, oldest first: one per output, or per run of the same state when there are many. */
function cells(outputs) {
  const oldest = [...outputs].reverse();
  if (oldest.length <= STRIP_CELLS) return oldest.map((o) => ({ ...o, n: 1, newestAge: o.age }));
  const runs = [];
  for (const o of oldest) {
    const last = runs.at(-1);
    if (last?.state === o.state) {
      last.n++;
      last.before += o.before ?? 0;
      last.after += o.after ?? 0;
      last.newestAge = o.age;
    } else runs.push({ state: o.state, ref: '', n: 1, age: o.age, newestAge: o.age, before: o.before ?? 0, after: o.after ?? 0 });
  }
  return runs;
}

function strip(outputs) {
  const total = outputs.reduce((n, o) => n + (o.before ?? 0), 0) || 1;
  const title = (c) => c.n === 1
    ? `${c.age} turn${c.age === 1 ? '' : 's'} ago · ${c.ref} · ${STATE_LABEL[c.state]} · ${fmt(c.before ?? 0)} → ${fmt(c.after ?? 0)} tokens`
    : `${fmt(c.n)} outputs, ${c.age}–${c.newestAge} turns ago · ${STATE_LABEL[c.state]} · ${fmt(c.before)} → ${fmt(c.after)} tokens`;
  // Oldest on the left, like the conversation; the width is the raw size.
  return h('div', { class: 'age-strip', id: 'age-strip', role: 'img', 'aria-label': `${outputs.length} tool outputs, oldest to newest, coloured by what each became` },
    cells(outputs).map((c) => h('span', {
      class: `age-cell state-${c.state}`,
      'data-state': c.state,
      'data-outputs': c.n,
      style: { flexGrow: String(Math.max(1, c.before ?? 1)), flexBasis: `${Math.max(0.2, ((c.before ?? 0) / total) * 100)}%` },
      title: title(c),
    }, h('span', { class: 'age-fill', style: { height: `${c.before ? Math.max(4, Math.min(100, ((c.after ?? 0) / c.before) * 100)) : 100}%` } }))));
}

function legend(counts) {
  return h('p', { class: 'age-legend' },
    Object.entries(STATE_LABEL).filter(([k]) => counts[k]).map(([k, label]) =>
      h('span', { class: `age-key state-${k}`, 'data-state': k }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), `${label} `, h('strong', { 'data-count': counts[k] }, fmt(counts[k])))));
}

function table(outputs) {
  const row = (o) => h('tr', { class: `state-${o.state}`, 'data-state': o.state, 'data-age': o.age },
    h('td', { class: 'num' }, o.age === 0 ? 'this turn' : `${fmt(o.age)} turn${o.age === 1 ? '' : 's'} ago`),
    h('td', { class: 'age-ref' }, h('code', {}, o.ref.split(' · ')[0] || '?'), o.ref.includes(' · ') ? h('span', { class: 'age-id' }, o.ref.split(' · ').slice(1).join(' · ')) : null, o.stub ? h('span', { class: 'age-stub muted', title: o.stub }, o.stub.replace('[ctxguard:cleared-tool-output] ', '')) : null),
    h('td', { class: 'num', 'data-value': o.before ?? '' }, o.before === null ? '—' : fmt(o.before)),
    h('td', { class: 'num', 'data-value': o.after ?? '' }, o.after === null ? '—' : fmt(o.after)),
    h('td', {}, h('span', { class: `age-badge state-${o.state}` }, STATE_LABEL[o.state])));
  const body = h('tbody', {}, outputs.slice(0, TABLE_ROWS).map(row));
  const more = outputs.length > TABLE_ROWS ? h('button', { type: 'button', class: 'link', id: 'age-more' }, `Show the ${fmt(outputs.length - TABLE_ROWS)} older outputs`) : null;
  more?.addEventListener('click', () => {
    body.append(...outputs.slice(TABLE_ROWS).map(row));
    more.remove();
  });
  return [
    h('div', { class: 'table-scroll' },
      h('table', { class: 'age-table', id: 'age-table' },
        h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Age'), h('th', {}, 'Tool call'), h('th', { class: 'num' }, 'Raw'), h('th', { class: 'num' }, 'Model'), h('th', {}, 'Became'))),
        body)),
    more,
  ];
}

/** The `tool_output_clear` steps, as a table (the newest last). */
function steps(traces) {
  const clear = traces.filter((t) => t.operation === 'tool_output_clear');
  if (!clear.length) return h('p', { class: 'muted small', id: 'age-steps' }, 'No clearing step in this call (a step is reported once, by the call that takes it).');
  const withTurn = clear.some((t) => t.turn !== undefined);
  return [h('div', { class: 'table-scroll age-steps-scroll' },
    h('table', { class: 'age-table age-steps', id: 'age-steps' },
      h('thead', {}, h('tr', {},
        withTurn ? h('th', { class: 'num' }, 'Turn') : null,
        h('th', {}, 'Trace'), h('th', { class: 'num' }, 'Newly cleared'), h('th', { class: 'num' }, 'Saved by age'), h('th', { class: 'num' }, 'Prefix invalidated'))),
      h('tbody', {}, clear.map((t) => h('tr', { 'data-cleared': t.messagesCleared ?? 0, 'data-prefix': t.prefixInvalidatedTokens ?? 0 },
        withTurn ? h('td', { class: 'num' }, fmt(t.turn)) : null,
        h('td', {}, h('code', {}, 'tool_output_clear'), ` ${t.status}`),
        h('td', { class: 'num' }, fmt(t.messagesCleared ?? 0)),
        h('td', { class: 'num' }, fmt(t.tokensSaved)),
        h('td', { class: 'num' }, h('strong', {}, fmt(t.prefixInvalidatedTokens ?? 0)))))))),
    h('p', { class: 'muted small' }, 'Prefix invalidated: the tokens of the model input from the first message the step changed to the end — what a prompt cache can no longer serve. Between steps the prefix stays byte-identical.')];
}

/**
 * @param root   the element to fill
 * @param data   { rows, counts, vrows, vcounts, traces, metrics, protect, title?, note? }:
 *               rowsFor and countMessages of the raw conversation and of the model input, the
 *               call's traces and metrics, the protected budget the guard was given (or null),
 *               and whether the call was degraded (a fallback, not a summary, replaced the oldest)
 */
export function renderAges(root, { rows, counts, vrows, vcounts, traces, metrics, protect, degraded = false, title = 'Tool outputs by age', note = null }) {
  // Not in the model input: replaced by the summary, or by the mechanical fallback's note.
  const outputs = toolOutputs(rows, counts, vrows, vcounts, degraded ? 'replaced' : 'summarized');
  const byState = {};
  for (const o of outputs) byState[o.state] = (byState[o.state] ?? 0) + 1;
  const c = metrics?.clearing ?? { cleared: 0, compacted: 0, savedTokens: 0, protectTokens: 0, clearAtLeast: 0 };
  const head = h('div', { class: 'card-head' },
    h('h2', {}, title),
    h('p', { class: 'muted small' }, h('code', {}, 'clearToolOutputs'), ' · newest first'));
  if (!outputs.length) {
    fill(root, head, h('p', { class: 'muted', id: 'age-none' }, 'This conversation has no tool outputs.'));
    return;
  }
  fill(root, head,
    note ? h('p', { class: 'muted small' }, note) : null,
    h('dl', { class: 'facts age-facts', id: 'age-facts' },
      h('dt', {}, 'Tool outputs'), h('dd', { 'data-value': outputs.length }, fmt(outputs.length)),
      h('dt', {}, 'Protected budget'), h('dd', { id: 'age-protect', 'data-value': protect ?? 'default' },
        `${fmt(c.protectTokens ?? 0)} tokens (${protect === null || protect === undefined ? "ctxguard's default" : 'protectTokens'}); a step saves at least ${fmt(c.clearAtLeast ?? 0)}`),
      h('dt', {}, 'metrics.clearing'), h('dd', { id: 'age-clearing', 'data-cleared': c.cleared, 'data-compacted': c.compacted, 'data-saved': c.savedTokens, 'data-protect': c.protectTokens, 'data-clear-at-least': c.clearAtLeast },
        `${fmt(c.cleared)} cleared · ${fmt(c.compacted)} compacted by age · ${fmt(c.savedTokens)} tokens saved`)),
    legend(byState),
    strip(outputs),
    h('p', { class: 'muted small age-axis' }, h('span', {}, '← oldest'), h('span', {}, 'width: raw size · fill: what the model gets'), h('span', {}, 'newest →')),
    table(outputs),
    h('h3', {}, 'Clearing steps'),
    steps(traces ?? []));
}
