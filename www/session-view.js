// The "Whole conversation" card: plays N turns of a coding agent's session (session-turns.js) on
// top of the loaded conversation, calling guard.prepare() in the worker with the full display
// history every turn, as a chat client does. Per turn: the model input's tokens, what happened
// (a clearing step, a compaction, a remembered summary reused, a summary made ahead of time,
// degraded), the summarizer calls so far, the breaker and the time prepare() took. The page's
// thread only builds the next turn and draws (in batches, once per frame).

import { renderAges } from './age-view.js';
import { withWindow } from './compaction-view.js';
import { fill, fmt, h } from './dom.js';
import { renderAhead, renderBreaker } from './memory-view.js';
import { rowsFor } from './rows-more.js';
import { closingReply, turnMessages } from './session-turns.js';
import { builtinSummarizer, failingSummarizer, hangingSummarizer } from './summarizers.js';

const SUMMARIZERS = {
  instant: ['Built-in, instant', () => builtinSummarizer({ delayMs: 0 })],
  slow: ['Built-in, 2 s per call', () => builtinSummarizer({ delayMs: 2000 })],
  failing: ['Failing (throws after 200 ms)', () => failingSummarizer({ delayMs: 200 })],
  hanging: ['Hanging (never answers; timeoutMs ends it)', () => hangingSummarizer()],
};
const EVENT_LABEL = {
  clear: 'cleared a step',
  compacted: 'compacted',
  remembered: 'remembered summary',
  'ahead-started': 'summary started ahead',
  'ahead-applied': 'summary made ahead applied',
  degraded: 'degraded',
};

const num = (id, label, value, attrs = {}) =>
  h('label', { class: 'field' }, h('span', {}, label), h('input', { type: 'number', id, value: String(value), inputmode: 'numeric', ...attrs }));

/** What one turn's prepare() result says happened, as [kind, text] pairs. */
function eventsOf(result) {
  const events = [];
  for (const t of result.traces) {
    if (t.operation === 'tool_output_clear') {
      const c = result.metrics.clearing;
      events.push(['clear', `clearing step: ${fmt(t.messagesCleared ?? 0)} newly cleared · prefix ${fmt(t.prefixInvalidatedTokens ?? 0)}`,
        `tool_output_clear: ${fmt(t.messagesCleared ?? 0)} outputs newly cleared (now ${fmt(c.cleared)} cleared, ${fmt(c.compacted)} compacted by age); ${fmt(t.prefixInvalidatedTokens ?? 0)} tokens of prefix invalidated`]);
    }
    if (t.operation === 'summary_compact' && t.ahead === true && t.status === 'in_progress') events.push(['ahead-started', 'summary started in the background']);
    if (t.operation === 'summary_compact' && t.ahead === true && t.status === 'applied') events.push(['ahead-applied', 'summary made ahead of time applied']);
  }
  const applied = events.some(([k]) => k === 'ahead-applied');
  if (result.degraded) events.push(['degraded', `degraded: ${result.degradedReason}`]);
  else if (result.compaction && !applied) events.push(['compacted', `compacted: ${fmt(result.compaction.beforeTokens)} → ${fmt(result.compaction.afterTokens)} (${result.compaction.attempts} attempt${result.compaction.attempts === 1 ? '' : 's'})`]);
  if (!result.compaction && result.metrics.memory.coveredMessages > 0) events.push(['remembered', `remembered summary (covers ${fmt(result.metrics.memory.coveredMessages)} messages)`]);
  return events;
}

/** What the breaker did on turn `n`, from its state before and after (metrics.breaker), added to `s.breakerLog`. */
function noteBreaker(s, n, before, after) {
  const log = (kind, text) => s.breakerLog.push({ turn: n, kind, text });
  if (before.state !== 'open' && after.state === 'open') log('opened', `Turn ${n}: opened after ${after.failures} consecutive failed compactions.`);
  else if (before.state === 'open' && after.state === 'open' && after.failures > before.failures) log('reopened', `Turn ${n}: half open after the cool-down, asked the summarizer once, failed: open again.`);
  else if (before.state === 'open' && after.state === 'closed') log('closed', `Turn ${n}: half open after the cool-down, asked once, the summary came back: closed.`);
}

/**
 * @param root    the card element
 * @param api     the page's worker (ctxguard/worker's WorkerConnection)
 * @param current () => { cfg, conv } of the last valid input, or null
 */
export function createSession(root, api, current) {
  const $ = (sel) => root.querySelector(sel);
  const kind = h('select', { id: 'play-summarizer' }, Object.entries(SUMMARIZERS).map(([k, [label]]) => h('option', { value: k }, label)));
  fill(root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Whole conversation, turn by turn'),
      h('p', { class: 'muted small' }, h('code', {}, 'guard.prepare(displayHistory, { summarize, ahead })'), ' every turn')),
    h('p', { class: 'hint' }, 'Plays a coding agent\'s turns on top of the conversation above (each: a task, one ',
      h('code', {}, 'read_file'), ' call and its output), and passes the whole display history to prepare() in the worker every turn, as a chat client does. The guard is kept across turns: what it remembers, its clearing steps and its breaker carry over.'),
    h('div', { class: 'play-controls' },
      h('div', { class: 'cmp-row' },
        num('play-turns', 'Turns to play', 60, { min: '1', max: '500', step: '10' }),
        num('play-output', 'Tool output (tokens)', 800, { min: '50', step: '100' }),
        num('play-window', 'Window for this run', 16000, { min: '1000', step: '1000' }),
        num('play-pause', 'Pause between turns (ms)', 0, { min: '0', step: '100' })),
      h('div', { class: 'cmp-row' },
        h('label', { class: 'field' }, h('span', {}, 'Summarizer'), kind),
        num('play-timeout', 'timeoutMs (per attempt)', 10000, { min: '100', step: '500' }),
        num('play-cooldown', 'Breaker cool-down (calls)', 10, { min: '1', step: '1' }),
        h('label', { class: 'toggle cmp-force' }, h('input', { type: 'checkbox', id: 'play-ahead' }),
          h('span', {}, h('strong', {}, 'ahead: true'), h('span', { class: 'muted' }, ' — summaries made in the background')))),
      h('div', { class: 'cmp-buttons' },
        h('button', { type: 'button', class: 'button primary', id: 'play' }, 'Play'),
        h('button', { type: 'button', class: 'button', id: 'play-stop', disabled: true }, 'Stop'),
        h('button', { type: 'button', class: 'button', id: 'reset-breaker', disabled: true }, 'guard.resetBreaker()'),
        h('button', { type: 'button', class: 'button', id: 'play-restart', disabled: true }, 'Start over'))),
    h('p', { class: 'play-summary', id: 'play-summary', 'aria-live': 'polite' }),
    h('div', { class: 'play-memory' },
      h('section', { 'aria-label': 'Circuit breaker' }, h('h3', {}, 'Circuit breaker'), h('div', { id: 'breaker-box' })),
      h('section', { 'aria-label': 'Summaries made ahead of time' }, h('h3', {}, 'Summaries made ahead of time'), h('div', { id: 'ahead-box' }))),
    h('div', { class: 'table-scroll play-scroll' },
      h('table', { class: 'play-table', id: 'play-table' },
        h('thead', {}, h('tr', {},
          h('th', { class: 'num' }, 'Turn'), h('th', { class: 'num' }, 'Model input'), h('th', {}, 'What happened'),
          h('th', { class: 'num' }, 'Summarizer calls'), h('th', {}, 'Breaker'), h('th', { class: 'num' }, 'prepare()'))),
        h('tbody', { id: 'play-rows' }))),
    h('div', { id: 'play-ages' }));
  root.dataset.state = 'idle';

  let session = null; // { guard, key, history, format, conv, turns, calls, rows, runs, ... }
  let controller = null;

  const cfgKey = (cfg) => JSON.stringify(cfg);

  function config(state) {
    const win = Number($('#play-window').value);
    return { ...withWindow(state.cfg, win), breaker: { cooldownCalls: Math.max(1, Number($('#play-cooldown').value) || 10) } };
  }

  async function start(state) {
    session?.guard.free();
    const cfg = config(state);
    const guard = await api.createGuard(cfg);
    const history = [...state.conv.messages];
    const last = history.at(-1);
    // A conversation that ends with the user's message gets an answer first.
    if (last && last.role === 'user' && !(Array.isArray(last.content) && last.content.some((b) => b?.type === 'tool_result')) && !(Array.isArray(last.parts) && last.parts.some((p) => p?.functionResponse))) history.push(closingReply(state.cfg.format));
    session = {
      guard, key: cfgKey(cfg), cfg, conv: state.conv, source: state.source, format: state.cfg.format, history, base: history.length,
      turns: 0, calls: 0, rows: [], runs: [], last: null, breakerLog: [],
    };
    fill($('#play-rows'));
    fill($('#play-ages'));
    $('#reset-breaker').disabled = false;
    $('#play-restart').disabled = false;
  }

  // Rows are drawn once per frame, however many turns finished since.
  let queued = [];
  let frame = 0;
  function draw(row) {
    queued.push(row);
    if (!frame) frame = requestAnimationFrame(flush);
  }
  function flush() {
    frame = 0;
    const body = $('#play-rows');
    body.append(...queued.map(rowOf));
    queued = [];
    body.closest('.play-scroll').scrollTop = body.closest('.play-scroll').scrollHeight;
    showMemory();
    summary();
  }

  function rowOf(r) {
    const usable = r.metrics.usableLimit;
    return h('tr', { 'data-turn': r.turn, 'data-used': r.metrics.usedTokens, 'data-events': r.events.map(([k]) => k).join(' '), 'data-calls': r.calls, 'data-breaker': r.metrics.breaker.state, class: r.events.length ? 'has-events' : null },
      h('td', { class: 'num' }, fmt(r.turn)),
      h('td', { class: 'num play-used' },
        h('span', { class: 'mini', 'aria-hidden': 'true' }, h('span', { class: `state-${r.metrics.state}`, style: { width: `${Math.min(100, (r.metrics.usedTokens / usable) * 100)}%` } })),
        fmt(r.metrics.usedTokens)),
      h('td', { class: 'play-events' }, r.events.length
        ? r.events.map(([k, text, title]) => h('span', { class: `play-event ev-${k}`, title: title ?? text }, text))
        : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, fmt(r.calls)),
      h('td', {}, h('span', { class: `breaker-dot breaker-${r.metrics.breaker.state}` }, r.metrics.breaker.state.replace('_', ' '))),
      h('td', { class: 'num muted' }, `${r.ms < 10 ? r.ms.toFixed(1) : fmt(r.ms)} ms`));
  }

  function summary() {
    if (!session) {
      fill($('#play-summary'));
      return;
    }
    const count = (k) => session.rows.filter((r) => r.events.some(([e]) => e === k)).length;
    const max = session.rows.reduce((m, r) => Math.max(m, r.metrics.usedTokens), 0);
    const usable = session.last?.metrics.usableLimit ?? 0;
    const stats = session.transfer;
    const el = $('#play-summary');
    for (const k of Object.keys(EVENT_LABEL)) el.dataset[k.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = String(count(k));
    el.dataset.turns = String(session.turns);
    el.dataset.calls = String(session.calls);
    fill(el,
      h('strong', {}, `${fmt(session.turns)} turn${session.turns === 1 ? '' : 's'} played`),
      ` (${fmt(session.history.length)} messages in the display history) · ${fmt(session.calls)} summarizer call${session.calls === 1 ? '' : 's'} · `,
      `${count('compacted')} compacted · ${count('clear')} clearing steps · ${count('remembered')} reused a remembered summary · ${count('ahead-applied')} applied a summary made ahead · ${count('degraded')} degraded · `,
      `largest model input ${fmt(max)} of ${fmt(usable)} usable tokens`,
      stats ? h('span', { class: 'muted' }, ` · the last prepare() sent ${fmt(stats.sent)} new messages to the worker and referred to the ${fmt(stats.reused)} it already had`) : null);
  }

  function showMemory() {
    renderBreaker($('#breaker-box'), session?.last?.metrics.breaker ?? null, {
      turn: session?.last ? session.turns : null,
      log: session?.breakerLog ?? [],
      skipped: session?.rows.filter((r) => r.degradedReason === 'breaker_open').length ?? 0,
    });
    renderAhead($('#ahead-box'), session?.runs ?? [], $('#play-ahead').checked);
  }

  /**
   * The summarizer of one turn's prepare(): counts the calls, and on `box` (the turn's own) when
   * they started and ended — a summary made ahead of time by this turn is called through it after
   * prepare() returned.
   */
  function summarizerFor(make, box) {
    const summarize = make();
    return async (request) => {
      session.calls++;
      box.calls++;
      box.firstCall ??= performance.now();
      try {
        return await summarize(request);
      } finally {
        box.lastEnd = performance.now();
      }
    };
  }

  async function turn(n, signal) {
    const s = session;
    const { ask, reply } = turnMessages(s.format, n, Math.max(50, Number($('#play-output').value) || 800));
    s.history.push(...ask);
    // This turn's summarizer calls and heartbeats; it becomes the record of the summary it starts ahead, if any.
    const box = { startTurn: n, calls: 0, beats: 0, firstCall: null, lastEnd: null, status: null, traces: [], appliedTurn: null, applyStart: 0, applyEnd: 0, done: false, startUsed: 0 };
    const opts = {
      summarize: summarizerFor(SUMMARIZERS[kind.value]?.[1] ?? SUMMARIZERS.instant[1], box),
      ahead: $('#play-ahead').checked,
      timeoutMs: Math.max(100, Number($('#play-timeout').value) || 10000),
      retryDelayMs: 100,
      heartbeatMs: 250,
      signal,
      onProgress: (p) => {
        if (p.ahead) box.beats++;
      },
      onTrace: (t) => {
        // The end of a summary made ahead of time arrives after this turn's prepare() returned.
        if (box.done && t.operation === 'summary_compact' && t.ahead === true) {
          box.traces.push(t.status);
          box.status = t.status;
          if (!frame) frame = requestAnimationFrame(flush);
        }
      },
    };
    if (s.conv.tools !== undefined) opts.tools = s.conv.tools;
    if (s.conv.system !== undefined) opts.system = s.conv.system;
    const earlier = s.runs.length;
    const t0 = performance.now();
    const result = await s.guard.prepare(s.history, opts);
    const t1 = performance.now();
    s.transfer = api.transferStats?.lastCall ?? null;
    box.done = true;
    s.history.push(reply);
    s.turns = n;
    s.last = result;
    const events = eventsOf(result);
    if (events.some(([k]) => k === 'ahead-started')) {
      box.startUsed = result.metrics.usedTokens;
      box.traces = [...result.traces.filter((t) => t.operation === 'summary_compact' && t.ahead === true).map((t) => t.status), ...box.traces];
      s.runs.push(box);
    }
    if (events.some(([k]) => k === 'ahead-applied')) {
      const run = s.runs.slice(0, earlier).findLast((r) => r.appliedTurn === null);
      if (run) Object.assign(run, { appliedTurn: n, applyStart: t0, applyEnd: t1, status: run.status ?? 'completed', traces: [...run.traces, 'applied'] });
    }
    noteBreaker(s, n, s.rows.at(-1)?.metrics.breaker ?? { state: 'closed', failures: 0 }, result.metrics.breaker);
    const clearTraces = result.traces.filter((t) => t.operation === 'tool_output_clear').map((t) => ({ ...t, turn: n }));
    const row = { turn: n, metrics: result.metrics, events, calls: s.calls, ms: t1 - t0, clearTraces, degradedReason: result.degradedReason };
    s.rows.push(row);
    draw(row);
  }

  async function play() {
    const state = current();
    if (!state) {
      fill($('#play-summary'), h('span', { class: 'cmp-error', id: 'play-error' }, 'Fix the conversation or the limits first (see the error above).'));
      return;
    }
    controller = new AbortController();
    root.dataset.state = 'playing';
    $('#play').disabled = true;
    $('#play-stop').disabled = false;
    try {
      if (!session || session.key !== cfgKey(config(state)) || session.source !== state.source) await start(state);
      const until = session.turns + Math.max(1, Math.min(500, Number($('#play-turns').value) || 60));
      const pause = Math.max(0, Number($('#play-pause').value) || 0);
      for (let n = session.turns + 1; n <= until && !controller.signal.aborted; n++) {
        await turn(n, controller.signal);
        if (pause && n < until) await new Promise((ok) => setTimeout(ok, pause));
      }
      if (frame) {
        cancelAnimationFrame(frame);
        flush();
      }
      await showAges();
    } catch (e) {
      if (!controller.signal.aborted) fill($('#play-summary'), h('span', { class: 'cmp-error', id: 'play-error' }, e?.code ? [h('code', {}, e.code), ' '] : null, e?.message ?? String(e)));
      else summary();
    } finally {
      controller = null;
      $('#play').disabled = false;
      $('#play-stop').disabled = true;
      $('#play').textContent = session?.turns ? 'Play more turns' : 'Play';
      root.dataset.state = 'done';
      root.dataset.turns = String(session?.turns ?? 0);
    }
  }

  /** "Tool outputs by age" for the last turn's model input. */
  async function showAges() {
    const s = session;
    if (!s?.last) return;
    const r = s.last;
    const system = s.format === 'openai' ? undefined : r.system ?? undefined;
    const opts = { model: s.cfg.model, format: s.format, places: true, ...(s.conv.tools !== undefined ? { tools: s.conv.tools } : {}) };
    const [counts, vcounts] = await Promise.all([
      api.countMessages(s.history.slice(0, -1), { ...opts, ...(s.conv.system !== undefined ? { system: s.conv.system } : {}) }),
      api.countMessages(r.messages, { ...opts, ...(system !== undefined ? { system } : {}) }),
    ]);
    renderAges($('#play-ages'), {
      rows: rowsFor(s.format, { messages: s.history.slice(0, -1), system: s.conv.system }, counts.places),
      counts,
      vrows: rowsFor(s.format, { messages: r.messages, system }, vcounts.places),
      vcounts,
      traces: s.rows.flatMap((row) => row.clearTraces),
      metrics: r.metrics,
      degraded: r.degraded,
      protect: s.cfg.clearToolOutputs?.protectTokens ?? null,
      title: `Tool outputs by age on turn ${fmt(s.turns)}`,
      note: `What the model got on the last turn played (prepare()'s model input) for each tool output of the display history; ${r.degraded ? "the oldest were replaced by the mechanical fallback's note (the turn was degraded)" : 'the oldest were replaced by the summary'}.`,
    });
  }

  kind.addEventListener('change', () => {
    // A hanging summarizer waits for its timeout, three times a compaction: a short one keeps the demo moving.
    if (kind.value === 'hanging' && Number($('#play-timeout').value) > 1000) $('#play-timeout').value = '1000';
  });
  $('#play-ahead').addEventListener('change', showMemory);
  $('#play').addEventListener('click', play);
  $('#play-stop').addEventListener('click', () => controller?.abort(new Error('stopped by the user')));
  $('#reset-breaker').addEventListener('click', async () => {
    if (!session) return;
    await session.guard.resetBreaker();
    session.breakerLog.push({ turn: session.turns, kind: 'reset', text: `guard.resetBreaker() after turn ${session.turns}: closed; the next compaction asks the summarizer again.` });
    // The breaker as it is now (measure's metrics carry it too).
    const metrics = await session.guard.measure(session.history, { ...(session.conv.tools !== undefined ? { tools: session.conv.tools } : {}), ...(session.conv.system !== undefined ? { system: session.conv.system } : {}) });
    session.last = { ...session.last, metrics: { ...(session.last?.metrics ?? metrics), breaker: metrics.breaker } };
    showMemory();
  });
  $('#play-restart').addEventListener('click', () => {
    controller?.abort(new Error('started over'));
    session?.guard.free();
    session = null;
    fill($('#play-rows'));
    fill($('#play-ages'));
    $('#reset-breaker').disabled = true;
    $('#play-restart').disabled = true;
    $('#play').textContent = 'Play';
    root.dataset.state = 'idle';
    root.dataset.turns = '0';
    summary();
    showMemory();
  });
  showMemory();
}
