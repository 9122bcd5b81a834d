// The guard's memory across the turns the "Whole conversation" card plays: the summarizer's
// circuit breaker (metrics.breaker, with resetBreaker) and the summaries made ahead of time
// (their heartbeats and traces with `ahead`, the turn that applied each, and the time the user
// did not wait). Only draws what the card recorded from prepare's results and callbacks.

import { fill, fmt, h } from './dom.js';

const BREAKER_LABEL = { closed: 'closed', open: 'open', half_open: 'half open' };

/**
 * `metrics.breaker` as a line (state, failures, when it half-opens), what happened to it turn by
 * turn (`log`: { turn, kind, text }), and how many turns went to the fallback without asking.
 */
export function renderBreaker(root, breaker, { turn = null, log = [], skipped = 0 } = {}) {
  if (!breaker) {
    fill(root, h('p', { class: 'muted small', id: 'breaker-state', 'data-state': 'none' }, 'No prepare() yet: metrics.breaker appears after the first turn.'));
    return;
  }
  const when = breaker.state !== 'open' ? null
    : breaker.closesAfterCalls !== null && breaker.closesAfterCalls !== undefined
      ? `half-opens after ${fmt(breaker.closesAfterCalls)} more prepare call${breaker.closesAfterCalls === 1 ? '' : 's'}${breaker.closesInMs !== null ? ` or in ${fmt(breaker.closesInMs)} ms` : ''}`
      : breaker.closesInMs !== null ? `half-opens in ${fmt(breaker.closesInMs)} ms` : null;
  fill(root,
    h('p', { class: `breaker breaker-${breaker.state}`, id: 'breaker-state', 'data-state': breaker.state, 'data-failures': breaker.failures, 'data-closes-after': breaker.closesAfterCalls ?? '' },
      h('span', { class: 'breaker-badge' }, `breaker ${BREAKER_LABEL[breaker.state] ?? breaker.state}`), ' ',
      `${fmt(breaker.failures)} consecutive failed compaction${breaker.failures === 1 ? '' : 's'}`,
      when ? ` · ${when}` : '',
      turn !== null ? h('span', { class: 'muted' }, ` (metrics.breaker as of turn ${turn})`) : null),
    log.length ? h('ul', { class: 'breaker-log', id: 'breaker-log' }, log.map((e) => h('li', { 'data-kind': e.kind, 'data-turn': e.turn }, e.text))) : null,
    skipped ? h('p', { class: 'muted small', id: 'breaker-skipped', 'data-skipped': skipped },
      `${fmt(skipped)} turn${skipped === 1 ? '' : 's'} went straight to the mechanical fallback (degradedReason breaker_open) without asking the summarizer.`) : null);
}

/** The summaries made ahead of time: one line per run, with its heartbeats and traces. */
export function renderAhead(root, runs, enabled) {
  if (!enabled && !runs.length) {
    fill(root, h('p', { class: 'muted small', id: 'ahead-none' }, 'ahead: off — a compaction runs inside the prepare() that crosses the trigger, and that turn waits for the summarizer.'));
    return;
  }
  if (!runs.length) {
    fill(root, h('p', { class: 'muted small', id: 'ahead-none' }, 'ahead: on — no summary started yet: one starts in the background once usage passes the ahead threshold (0.65 of usable by default, below the 0.8 trigger).'));
    return;
  }
  fill(root, h('ol', { class: 'ahead-runs', id: 'ahead-runs' }, runs.map((r, i) => {
    const ran = r.firstCall !== null && r.lastEnd !== null ? r.lastEnd - r.firstCall : null;
    const waited = r.appliedTurn !== null && ran !== null ? Math.max(0, Math.min(r.lastEnd, r.applyEnd) - Math.max(r.firstCall, r.applyStart)) : null;
    const status = r.appliedTurn !== null ? 'applied' : r.status ?? 'running';
    return h('li', { class: `ahead-run ahead-${status}`, 'data-status': status, 'data-started': r.startTurn, 'data-applied': r.appliedTurn ?? '', 'data-beats': r.beats, 'data-traces': r.traces.join(' ') },
      h('p', {},
        h('strong', {}, `Summary ${i + 1} made ahead of time`), ': ',
        `started in the background on turn ${r.startTurn} (${fmt(r.startUsed)} tokens, past the ahead threshold)`,
        r.status === 'completed' || r.status === 'fallback' ? `, ${r.status === 'completed' ? 'finished' : 'failed'}${ran !== null ? ` after ${fmt(ran)} ms` : ''}` : ', running',
        r.appliedTurn !== null ? [`; applied on turn ${r.appliedTurn}, when the trigger was crossed`,
          h('span', { class: 'ahead-saved', 'data-not-waited': ran !== null && waited !== null ? Math.round(ran - waited) : '' },
            ran !== null && waited !== null ? ` — that prepare() took ${fmt(r.applyEnd - r.applyStart)} ms: the user did not wait ${fmt(ran - waited)} ms of the summary's ${fmt(ran)} ms` : '')] : '',
        '.'),
      h('p', { class: 'muted small' },
        `${fmt(r.beats)} heartbeat${r.beats === 1 ? '' : 's'} with ahead: true · ${fmt(r.calls)} summarizer call${r.calls === 1 ? '' : 's'} · traces: `,
        r.traces.map((t, k) => [k ? ', ' : '', h('code', {}, `summary_compact ${t}`)])));
  })));
}
