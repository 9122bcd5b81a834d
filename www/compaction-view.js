// The Compaction card: runs guard.prepare() on the conversation with a summarizer (built-in or an
// OpenAI-compatible endpoint), shows the heartbeats live, the [SummaryCompact] log lines, the
// compaction record, the model-visible messages and the checkpoint; downloads the stored turns and
// reloads a saved conversation with resolveHistory(). `api` is the page's worker (ctxguard/worker):
// prepare() runs there, while the summarizer, the heartbeats and the log lines arrive here.

import { fill, fmt, h } from './dom.js';
import { renderMessages } from './messages-view.js';
import { rowsFor } from './rows-more.js';
import { builtinSummarizer, endpointSummarizer, failingSummarizer, hangingSummarizer } from './summarizers.js';

/** The compaction record's fields in display order (index.d.ts: CompactionRecord). */
const RECORD_FIELDS = ['status', 'attempts', 'failureReason', 'beforeTokens', 'afterTokens', 'tokensSaved', 'removedItems', 'durationMs'];
const STORAGE_KEY = 'ctxguard-demo:conversation';
/** Stored-turns files longer than this (characters) are offered as a download only, not kept in localStorage. */
const STORAGE_LIMIT = 2_000_000;
const SUGGESTED_WINDOW = 12000;
const HEARTBEAT_MS = 250;

function value(field, v) {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  if (field === 'durationMs') return `${fmt(v)} ms`;
  if (typeof v === 'number') return fmt(v);
  return String(v);
}

function fields(obj, keys, id) {
  return h('dl', { class: 'trace-fields', id },
    keys.map((k) => h('div', { class: 'tf' },
      h('dt', {}, k),
      h('dd', { 'data-field': k, 'data-value': JSON.stringify(obj[k] ?? null) }, value(k, obj[k])))));
}

/** The message list of messages-view.js for one message list, without its page-level ids. */
async function messageList(api, title, { messages, system, format, model, tools }) {
  const box = h('div', { class: 'cmp-messages' });
  const conv = { messages, system: format === 'openai' ? undefined : system ?? undefined };
  let counts = null;
  try {
    counts = await api.countMessages(messages, { model, format, places: true, ...(tools ? { tools } : {}), ...(conv.system !== undefined ? { system: conv.system } : {}) });
  } catch {
    // Shown without counts.
  }
  renderMessages(box, rowsFor(format, conv, counts?.places), counts, null);
  box.querySelector('h2')?.replaceChildren(title);
  for (const el of box.querySelectorAll('[id]')) el.removeAttribute('id');
  return box;
}

/** `cfg` with a `win`-token window (max and reserved output an eighth of it); as it is when `win` is blank. */
export function withWindow(cfg, win) {
  if (!(win > 0)) return cfg;
  const out = Math.floor(win / 8);
  return { ...cfg, contextWindow: win, maxOutputTokens: out, reservedOutputTokens: out };
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * @param root    the card element
 * @param api     the ctxguard module
 * @param current () => { cfg, conv } of the last valid input (the page's guard config and the parsed conversation), or null
 */
export function createCompaction(root, api, current) {
  const $ = (sel) => root.querySelector(sel);
  let running = null;

  const kindBuiltin = h('input', { type: 'radio', name: 'summarizer', value: 'builtin', id: 'summarizer-builtin', checked: true });
  const kindEndpoint = h('input', { type: 'radio', name: 'summarizer', value: 'endpoint', id: 'summarizer-endpoint' });
  const kindFailing = h('input', { type: 'radio', name: 'summarizer', value: 'failing', id: 'summarizer-failing' });
  const kindHanging = h('input', { type: 'radio', name: 'summarizer', value: 'hanging', id: 'summarizer-hanging' });
  const endpointFields = h('div', { class: 'cmp-endpoint', id: 'endpoint-fields', hidden: true },
    h('label', { class: 'field' }, h('span', {}, 'Endpoint URL (chat completions)'),
      h('input', { type: 'text', id: 'endpoint-url', placeholder: 'https://api.openai.com/v1/chat/completions', autocomplete: 'off', spellcheck: 'false' })),
    h('div', { class: 'cmp-row' },
      h('label', { class: 'field grow' }, h('span', {}, 'API key (kept in memory only)'),
        h('input', { type: 'password', id: 'endpoint-key', autocomplete: 'off', spellcheck: 'false', placeholder: 'sk-…' })),
      h('label', { class: 'field grow' }, h('span', {}, 'Model'),
        h('input', { type: 'text', id: 'endpoint-model', value: 'gpt-4o-mini', autocomplete: 'off', spellcheck: 'false' }))),
    h('p', { class: 'hint' }, 'The request goes from this tab straight to that URL (the server must allow CORS). The key is never written to storage or to the downloaded file.'));

  fill(root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Compaction'),
      h('p', { class: 'muted small' }, h('code', {}, 'guard.prepare(messages, { summarize, onProgress, logger, force })'))),
    h('div', { class: 'cmp-controls' },
      h('fieldset', { class: 'cmp-kind' },
        h('legend', {}, 'Summarizer'),
        h('label', { class: 'toggle' }, kindBuiltin, h('span', {}, h('strong', {}, 'Built-in'), h('span', { class: 'muted' }, ' — deterministic, no network; answers a SessionState after ~1.5 s'))),
        h('label', { class: 'toggle' }, kindFailing, h('span', {}, h('strong', {}, 'Failing'), h('span', { class: 'muted' }, ' — an endpoint that is down: every call throws after 200 ms'))),
        h('label', { class: 'toggle' }, kindHanging, h('span', {}, h('strong', {}, 'Hanging'), h('span', { class: 'muted' }, ' — never answers: each attempt ends at timeoutMs'))),
        h('label', { class: 'toggle' }, kindEndpoint, h('span', {}, h('strong', {}, 'OpenAI-compatible endpoint')))),
      endpointFields,
      h('div', { class: 'cmp-row' },
        h('label', { class: 'field' }, h('span', {}, 'Window for this run'),
          h('input', { type: 'number', id: 'cmp-window', min: '1000', step: '1000', value: String(SUGGESTED_WINDOW), inputmode: 'numeric' })),
        h('label', { class: 'field' }, h('span', {}, 'timeoutMs (per attempt)'),
          h('input', { type: 'number', id: 'cmp-timeout', min: '100', step: '1000', value: '30000', inputmode: 'numeric' })),
        h('label', { class: 'toggle cmp-force' }, h('input', { type: 'checkbox', id: 'cmp-force', checked: true }),
          h('span', {}, h('strong', {}, 'force'), h('span', { class: 'muted' }, ' — compact even under the trigger')))),
      h('p', { class: 'hint', id: 'cmp-window-hint' }),
      h('div', { class: 'cmp-buttons' },
        h('button', { type: 'button', class: 'button primary', id: 'run-prepare' }, 'Run prepare()'),
        h('button', { type: 'button', class: 'button', id: 'cancel-prepare', disabled: true }, 'Cancel'))),
    h('div', { class: 'cmp-progress', id: 'cmp-progress', hidden: true }),
    h('div', { id: 'cmp-output' }),
    h('section', { class: 'cmp-reload', 'aria-label': 'Reload a saved conversation' },
      h('h3', {}, 'Reload a saved conversation'),
      h('p', { class: 'hint' }, 'Stored turns (a downloaded checkpoint file, or the copy this page keeps in localStorage after each compaction) go through ',
        h('code', {}, 'resolveHistory(turns, { format })'), ', which resumes from the latest checkpoint.'),
      h('div', { class: 'cmp-buttons' },
        h('label', { class: 'button', for: 'reload-file' }, 'Load a saved file…'),
        h('input', { type: 'file', id: 'reload-file', accept: '.json,application/json', class: 'sr-only' }),
        h('button', { type: 'button', class: 'button', id: 'reload-storage' }, 'From localStorage')),
      h('div', { id: 'reload-output' })));

  const hint = () => {
    const state = current();
    const win = Number($('#cmp-window').value);
    fill($('#cmp-window-hint'),
      win > 0
        ? `This run uses a ${fmt(win)}-token window (max and reserved output ${fmt(Math.floor(win / 8))}) on the page's model and source guards; blank uses the Limits panel. `
        : 'Blank: the Limits panel as it is. ',
      state ? `The conversation is ${fmt(state.usedTokens ?? 0)} tokens after the source guards. ` : '',
      h('button', { type: 'button', class: 'link', id: 'cmp-suggest' }, `Use ${fmt(SUGGESTED_WINDOW)}`));
    $('#cmp-suggest').addEventListener('click', () => {
      $('#cmp-window').value = String(SUGGESTED_WINDOW);
      hint();
    });
  };

  const onKind = () => {
    endpointFields.hidden = !kindEndpoint.checked;
    // A hanging summarizer waits for the timeout three times: a short one keeps the demo moving.
    if (kindHanging.checked && Number($('#cmp-timeout').value) > 5000) $('#cmp-timeout').value = '2000';
  };
  kindBuiltin.addEventListener('change', onKind);
  for (const k of [kindEndpoint, kindFailing, kindHanging]) k.addEventListener('change', onKind);
  $('#cmp-window').addEventListener('input', hint);
  $('#run-prepare').addEventListener('click', () => run());
  $('#cancel-prepare').addEventListener('click', () => running?.abort(new Error('cancelled by the user')));
  $('#reload-file').addEventListener('change', () => {
    const file = $('#reload-file').files?.[0];
    $('#reload-file').value = '';
    // The file is read and parsed in the worker.
    if (file) reload({ file }, `file ${file.name}`);
  });
  $('#reload-storage').addEventListener('click', () => {
    const text = localStorage.getItem(STORAGE_KEY);
    if (text === null) reloadError(new Error('Nothing saved in localStorage yet: run a compaction first.'));
    else reload({ text }, 'localStorage');
  });

  function runConfig(cfg) {
    return withWindow(cfg, Number($('#cmp-window').value));
  }

  function summarizer() {
    if (kindBuiltin.checked) return { summarize: builtinSummarizer(), label: 'built-in' };
    if (kindFailing.checked) return { summarize: failingSummarizer(), label: 'failing' };
    if (kindHanging.checked) return { summarize: hangingSummarizer(), label: 'hanging' };
    const url = $('#endpoint-url').value.trim();
    const model = $('#endpoint-model').value.trim();
    if (!url) throw new Error('Type the endpoint URL (an OpenAI-compatible /chat/completions URL).');
    if (!model) throw new Error('Type the model name for the endpoint.');
    return { summarize: endpointSummarizer({ url, apiKey: $('#endpoint-key').value, model }), label: `endpoint ${model}` };
  }

  async function run() {
    // Running from the click on, before the guard is made in the worker: whoever waits for `done`
    // never reads the previous run's result.
    root.dataset.state = 'running';
    const state = current();
    const out = $('#cmp-output');
    if (!state) {
      fill(out, h('p', { class: 'cmp-error', id: 'cmp-error' }, 'Fix the conversation or the limits first (see the error above).'));
      root.dataset.state = 'done';
      return;
    }
    const { cfg, conv } = state;
    let guard;
    let chosen;
    const config = runConfig(cfg);
    try {
      chosen = summarizer();
      guard = await api.createGuard(config);
    } catch (e) {
      fill(out, h('p', { class: 'cmp-error', id: 'cmp-error' }, e?.code ? [h('code', {}, e.code), ' '] : null, e?.message ?? String(e)));
      root.dataset.state = 'done';
      return;
    }
    const controller = new AbortController();
    running = controller;
    $('#run-prepare').disabled = true;
    $('#cancel-prepare').disabled = false;
    const beats = [];
    const logs = [];
    const traces = [];
    const progress = $('#cmp-progress');
    const started = performance.now();
    const beatList = h('ol', { class: 'cmp-beats', id: 'cmp-beats' });
    const live = h('p', { class: 'cmp-live', id: 'cmp-live' });
    const logBox = h('pre', { class: 'cmp-log', id: 'cmp-log' });
    const showLive = () => {
      const last = beats.at(-1);
      fill(live, h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        `Summarizing with the ${chosen.label} summarizer… `,
        h('strong', { id: 'cmp-elapsed' }, `${fmt(last?.elapsedMs ?? Math.round(performance.now() - started))} ms`),
        ` · attempt ${last?.attempt ?? 1} · ${beats.length} heartbeat${beats.length === 1 ? '' : 's'}`);
    };
    fill(progress, live, beatList);
    progress.hidden = false;
    fill(out, h('h3', {}, h('code', {}, '[SummaryCompact]'), ' log'), logBox);
    showLive();
    const tick = setInterval(() => {
      if (!beats.length) showLive();
    }, 100);
    const opts = {
      summarize: chosen.summarize,
      heartbeatMs: HEARTBEAT_MS,
      timeoutMs: Math.max(100, Number($('#cmp-timeout').value) || 30000),
      force: $('#cmp-force').checked,
      signal: controller.signal,
      onProgress: (p) => {
        beats.push(p);
        beatList.append(h('li', { class: 'cmp-beat', 'data-elapsed': p.elapsedMs, 'data-attempt': p.attempt },
          `${p.operation} ${p.status} · ${fmt(p.elapsedMs)} ms · attempt ${p.attempt}`));
        beatList.scrollTop = beatList.scrollHeight;
        showLive();
      },
      onTrace: (t) => traces.push(t),
      logger: (line) => {
        logs.push(line);
        logBox.textContent = logs.join('\n');
      },
    };
    if (conv.tools !== undefined) opts.tools = conv.tools;
    if (conv.system !== undefined) opts.system = conv.system;
    try {
      const result = await guard.prepare(conv.messages, opts);
      clearInterval(tick);
      const total = Math.round(performance.now() - started);
      const beatsText = `${beats.length} heartbeat${beats.length === 1 ? '' : 's'} while the summarizer ran`;
      if (result.degraded) {
        fill(live, h('span', { class: 'degraded-icon', 'aria-hidden': 'true' }, '!'), `prepare() finished degraded (${result.degradedReason}) in ${fmt(total)} ms · ${beatsText} · the mechanical fallback is never stored: no checkpoint`);
      } else {
        fill(live, h('span', { class: 'done-icon', 'aria-hidden': 'true' }, '✓'), `prepare() finished in ${fmt(total)} ms · ${beatsText}`);
      }
      if (!logs.length) logBox.textContent = '(no [SummaryCompact] lines: nothing was compacted)';
      await showResult(out, logBox, result, { cfg: config, conv, traces });
    } catch (e) {
      clearInterval(tick);
      fill(live, '✕ prepare() rejected');
      out.append(h('p', { class: 'cmp-error', id: 'cmp-error' }, e?.code ? [h('code', {}, e.code), ' '] : null, e?.message ?? String(e)));
    } finally {
      guard.free();
      running = null;
      $('#run-prepare').disabled = false;
      $('#cancel-prepare').disabled = true;
      root.dataset.state = 'done';
    }
  }

  async function showResult(out, logBox, result, { cfg, conv, traces }) {
    const c = result.compaction;
    const format = cfg.format;
    const m = result.metrics;
    out.append(
      h('div', { class: 'cmp-summary' },
        h('p', { class: `cmp-status ${result.degraded ? 'degraded' : 'ok'}`, id: 'cmp-degraded', 'data-degraded': String(result.degraded), 'data-reason': result.degradedReason ?? '' },
          result.degraded
            ? ['Degraded: ', h('code', {}, result.degradedReason ?? 'unknown'), ' — the mechanical fallback kept the tool evidence instead of a summary, never stored (checkpoint: null; the stored history stays whole; the next call over the trigger asks the summarizer again, or, while the breaker is open, sends this fallback again as long as it fits).']
            : c ? 'Not degraded: the summarizer answered and its SessionState became the summary.' : 'Not degraded; nothing was compacted.',
          ` degraded = ${result.degraded}, degradedReason = ${result.degradedReason ?? 'null'}.`),
        h('p', { class: 'muted small' },
          `Model-visible now: ${fmt(m.usedTokens)} of ${fmt(m.usableLimit)} usable tokens (trigger ${fmt(m.triggerLimit)}, target ${fmt(m.targetLimit)}) · ${fmt(result.messages.length)} messages · ${result.droppedMessages} dropped by the emergency layer · ${traces.length} trace${traces.length === 1 ? '' : 's'} delivered to onTrace`)),
      h('h3', {}, 'Compaction record'),
      c ? fields(c, [...RECORD_FIELDS, ...Object.keys(c).filter((k) => !RECORD_FIELDS.includes(k))], 'compaction-record')
        : h('p', { class: 'muted', id: 'no-compaction' }, 'compaction: null — the conversation is under the trigger. Tick force, or use a smaller window.'),
      await messageList(api, 'Model-visible messages after prepare()', { messages: result.messages, system: result.system, format, model: cfg.model, tools: conv.tools }));

    if (!result.checkpoint) return;
    // The stored turns: the earlier turn (everything before the latest user message) and the
    // compacting turn, whose persisted chain is the checkpoint.
    const lastUser = conv.messages.findLastIndex((msg) => msg?.role === 'user' && !(Array.isArray(msg.content) && msg.content.some((b) => b?.type === 'tool_result')));
    const earlier = conv.messages.slice(0, Math.max(0, lastUser));
    // Built in the worker, which already has the earlier messages (only their ids travel).
    const head = { format, model: cfg.model, savedAt: new Date().toISOString(), ...(conv.tools !== undefined ? { tools: conv.tools } : {}) };
    const { json, turns } = await api.call('turnsFile', { head, checkpoint: result.checkpoint, system: conv.system }, { messages: earlier });
    let savedNote = 'Saved to localStorage — reload it below.';
    if (json.length > STORAGE_LIMIT) savedNote = `Not saved to localStorage (${fmt(json.length)} characters is more than this page keeps there); download it instead.`;
    else {
      try {
        localStorage.setItem(STORAGE_KEY, json);
      } catch (e) {
        savedNote = `Not saved to localStorage (${e?.message ?? e}); download it instead.`;
      }
    }
    const dl = h('button', { type: 'button', class: 'button primary', id: 'download-checkpoint' }, 'Download checkpoint');
    dl.addEventListener('click', () => download('ctxguard-checkpoint.json', json));
    out.append(
      h('h3', {}, 'Checkpoint'),
      h('p', { class: 'hint' },
        `result.checkpoint: ${fmt(result.checkpoint.messages.length)} messages to persist now (system, summary, retained user messages, the current turn). The stored conversation has ${turns} turns; the last one's chain is the checkpoint. `,
        h('span', { id: 'cmp-saved' }, savedNote)),
      h('div', { class: 'cmp-buttons' }, dl),
      h('details', { class: 'cmp-chain' }, h('summary', {}, `The checkpoint chain (${fmt(result.checkpoint.messages.length)} messages, with ctxguard's markers under the ctxguard key)`),
        await messageList(api, 'Checkpoint chain', { messages: result.checkpoint.messages, system: result.checkpoint.system, format, model: cfg.model, tools: conv.tools })),
      h('details', { class: 'raw' }, h('summary', {}, 'checkpoint JSON'), h('pre', { id: 'checkpoint-json' }, JSON.stringify(result.checkpoint, null, 2))));
  }

  function reloadError(e) {
    fill($('#reload-output'), h('p', { class: 'cmp-error', id: 'reload-error' }, e?.code ? [h('code', {}, e.code), ' '] : null, e?.message ?? String(e)));
  }

  async function reload(input, from) {
    try {
      const state = current();
      const { resolved, metrics, storedCount, turns, format, model, tools } = await api.call('reload', {
        ...input,
        config: runConfig({ ...(state?.cfg ?? {}) }),
        format: state?.cfg.format ?? 'openai',
        model: state?.cfg.model ?? 'gpt-4o',
      });
      fill($('#reload-output'),
        h('p', { class: `cmp-status ${resolved.fromCheckpoint ? 'ok' : 'degraded'}`, id: 'reload-status', 'data-from-checkpoint': String(resolved.fromCheckpoint), 'data-checkpoint-index': JSON.stringify(resolved.checkpointIndex) },
          resolved.fromCheckpoint
            ? [h('strong', {}, `Resumed from checkpoint`), ` in turn ${resolved.checkpointIndex + 1} of ${turns} (checkpointIndex ${resolved.checkpointIndex})`]
            : [h('strong', {}, 'No checkpoint'), ': the whole history is replayed'],
          ` (from ${from}).`),
        fields({ fromCheckpoint: resolved.fromCheckpoint, checkpointIndex: resolved.checkpointIndex, messages: resolved.messages.length, storedMessages: storedCount, usedTokens: metrics.usedTokens, state: metrics.state },
          ['fromCheckpoint', 'checkpointIndex', 'messages', 'storedMessages', 'usedTokens', 'state'], 'reload-fields'),
        h('p', { class: 'muted small' }, `${fmt(resolved.messages.length)} messages to continue with instead of the ${fmt(storedCount)} stored; measured with ${model}: ${fmt(metrics.usedTokens)} of ${fmt(metrics.usableLimit)} usable tokens.`),
        await messageList(api, 'Resolved history', { messages: resolved.messages, system: resolved.system, format, model, tools }));
    } catch (e) {
      reloadError(e);
    }
  }

  hint();
  return { update: hint };
}
