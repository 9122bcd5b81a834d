// The traces of the last guardSources() pass (docs/design.md, "Observability"): one card per trace, every field listed.

import { fill, fmt, h } from './dom.js';

/** The trace schema's fields in display order (index.d.ts: ProtectionTrace). */
const FIELDS = ['operation', 'status', 'durationMs', 'beforeTokens', 'afterTokens', 'tokensSaved', 'messagesTruncated', 'emergency', 'attachmentBlocks', 'attachmentBlocksTruncated', 'removedHistoryItems', 'failureReason'];
const TOKENS = new Set(['beforeTokens', 'afterTokens', 'tokensSaved']);

function value(field, v) {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  if (field === 'durationMs') return `${v < 10 ? v.toFixed(2) : Math.round(v)} ms`;
  if (typeof v === 'number') return fmt(v);
  return String(v);
}

function traceCard(t, i) {
  const fields = [...FIELDS, ...Object.keys(t).filter((k) => !FIELDS.includes(k))].filter((k) => k in t && k !== 'operation' && k !== 'status');
  return h('li', { class: `trace status-${t.status}`, 'data-operation': t.operation, 'data-status': t.status, 'data-index': i },
    h('p', { class: 'trace-head' },
      h('code', { class: 'trace-op' }, t.operation), ' ',
      h('span', { class: `trace-status status-${t.status}` }, t.status),
      h('span', { class: 'trace-sum' },
        t.tokensSaved > 0 ? `${fmt(t.beforeTokens)} → ${fmt(t.afterTokens)} tokens` : `${fmt(t.beforeTokens)} tokens, nothing to cut`)),
    h('dl', { class: 'trace-fields' },
      fields.map((k) => h('div', { class: `tf${TOKENS.has(k) ? ' tokens' : ''}` },
        h('dt', {}, k),
        h('dd', { 'data-field': k, 'data-value': JSON.stringify(t[k] ?? null) }, value(k, t[k]))))));
}

/**
 * @param traces    GuardSourcesResult.traces
 * @param delivered how many traces the onTrace callback received in the same pass
 */
export function renderTraces(root, traces, delivered) {
  fill(root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Traces'),
      h('p', { class: 'muted small' }, `${traces.length} from this pass · ${delivered} delivered to onTrace`)),
    traces.length === 0
      ? h('p', { class: 'muted', id: 'no-traces' }, 'No traces: no tool output was over its limit, and the conversation has no attachment blocks (ctxguard emits no event for a pass that changed nothing).')
      : h('ol', { class: 'traces', id: 'traces' }, traces.map(traceCard)),
    h('p', { class: 'hint' }, 'A tool-output trace appears only when an output was compacted; an attachment trace (applied or noop) whenever attachment blocks exist.'));
}
