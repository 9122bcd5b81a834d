// The page: starts ctxguard in a Web Worker (guard.worker.js, through ctxguard/worker), wires the
// controls, and redraws the views after every change. The main thread only parses small inputs
// and renders; counting, the source guards and prepare() run in the worker, so the page stays
// responsive on a 2,000-message conversation. Plain ES modules, no build step; the package is
// imported from /pkg/ at run time so that a missing or broken build, or a browser without
// WebAssembly, gets a clear message.

import { renderAges } from './age-view.js';
import { renderBreakdown, renderBudget } from './budget-view.js';
import { createCompaction } from './compaction-view.js';
import { PageError, parseConversation } from './conversation.js';
import { fill, fmt, h, short } from './dom.js';
import { renderMessages } from './messages-view.js';
import { createReader } from './reader-view.js';
import { rowsFor } from './rows-more.js';
import { sample } from './sample.js';
import { sampleIn } from './sample-formats.js';
import { createChat } from './chat-view.js';
import { createSession } from './session-view.js';
import { renderTraces } from './traces-view.js';

document.documentElement.dataset.status = 'booting';

const $ = (id) => document.getElementById(id);
const LIMITS = ['contextWindow', 'maxOutputTokens', 'reservedOutputTokens', 'economicBudget', 'triggerRatio', 'targetRatio'];
const BUDGET_CODES = new Set(['INVALID_BUDGET', 'UNKNOWN_MODEL', 'INVALID_OPTIONS']);
const PROVIDERS = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google', meta: 'Meta', alibaba: 'Alibaba (Qwen)', deepseek: 'DeepSeek', mistral: 'Mistral', other: 'Other' };
const CUSTOM = '__custom__';
/** Conversations longer than this (JSON characters) are parsed in the worker and not put in the editor. */
const EDITOR_LIMIT = 1_000_000;
/** A pass that takes longer than this shows the progress indicator. */
const PROGRESS_DELAY_MS = 120;
/** Source-guard fields of the guard config that take a token count. */
const GUARD_NUMBERS = ['toolOutputLimit', 'toolOutputTotal', 'attachmentBudget'];
/** Fields of `clearToolOutputs` (tool outputs by age) the Source guards panel sets; blank: ctxguard's default. */
const CLEAR_NUMBERS = ['protectTokens', 'clearAtLeast'];
/**
 * The page starts below ctxguard's defaults so that the built-in sample shows the guards at work:
 * its log and JSON outputs are ~5,000 tokens each (the default limit is 8,000) and its two
 * attachments ~540 tokens together (the default budget is min(16,000, usable / 8)).
 */
// `edits: 'trigger'`: clearing and compaction start at the trigger, so that a short sample shows
// every layer; ctxguard's default waits until the request would not fit (docs/edits.md).
const PAGE_GUARDS = { toolOutputLimit: 1000, attachmentBudget: 400, edits: 'trigger' };

/** The connection to the page's worker (ctxguard/worker's WorkerConnection). */
let api = null;
/** The WorkerGuard of the current config. */
let guard = null;
/** A conversation too large for the editor: { conv, name, chars }, or null (the editor holds it). */
let loaded = null;
/** Model facts by model name (they do not change). */
const factsCache = new Map();
let guardKey = '';
let measuredOnce = false;
/** Passes so far; exposed as <html data-passes> (once a pass and any queued after it are done) so tests can wait for the next one. */
let passes = 0;
/** Progress events seen (<html data-progress-events>), for tests. */
let progressEvents = 0;
let reader = null;
let compaction = null;
/** The last valid input, for the Compaction and Whole conversation cards: { cfg, conv, usedTokens, source }. */
let lastValid = null;

function setStatus(text) {
  $('status').textContent = text;
}

function fatal(title, detail) {
  document.documentElement.dataset.status = 'fatal';
  setStatus('Not running');
  $('app').hidden = true;
  $('chat').hidden = true;
  $('inspector-title').hidden = true;
  fill($('fatal'), h('h2', {}, title), h('p', {}, detail));
  $('fatal').hidden = false;
}

function noWasm() {
  fatal('WebAssembly is not available', 'ctxguard counts tokens with a WebAssembly module, and this browser has WebAssembly switched off or does not support it. Use a current browser, or allow WebAssembly for this page.');
}

async function boot() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') {
    noWasm();
    return;
  }
  let helper;
  try {
    helper = await import('/pkg/worker.js');
  } catch (e) {
    fatal('ctxguard could not be loaded', `${e?.name ?? 'Error'}: ${e?.message ?? e}. The page expects the built package at /pkg/ (worker.js, worker-serve.js and the .wasm) — build it (make build) and serve the page with scripts/serve.mjs.`);
    return;
  }
  if (typeof helper.connectGuardWorker !== 'function') {
    fatal('This build of ctxguard is incomplete', 'The package at /pkg/ has no ctxguard/worker helper (worker.js). Rebuild it from a current checkout.');
    return;
  }
  try {
    api = await helper.connectGuardWorker(new Worker('/guard.worker.js', { type: 'module' }));
  } catch (e) {
    if (/WebAssembly/.test(e?.message ?? '')) noWasm();
    else fatal('ctxguard could not be started in a Web Worker', `${e?.code ?? e?.name ?? 'Error'}: ${e?.message ?? e}. The page runs ctxguard in a module worker (guard.worker.js, which loads /pkg/worker-serve.js).`);
    return;
  }
  populateModels(await api.knownModels());
  restoreSample();
  setPageGuards();
  $('guards-note').replaceChildren(
    h('code', {}, 'guard.guardSources()'), ', before every model call. The page starts at ',
    h('strong', {}, `${fmt(PAGE_GUARDS.toolOutputLimit)} and ${fmt(PAGE_GUARDS.attachmentBudget)}`),
    `, below ctxguard's defaults (${fmt(8000)}; min(16,000, usable ÷ 8)), so that the sample's ~5,000-token outputs and its PDF report show the effect. Blank fields use the defaults (greyed).`);
  reader = createReader($('reader-card'), api);
  compaction = createCompaction($('compaction-card'), api, () => lastValid);
  createSession($('session-card'), api, () => lastValid);
  const chat = createChat($('chat'), api).catch((e) => {
    $('chat-status').textContent = `The chat could not start: ${e?.code ?? e?.name ?? 'Error'}: ${e?.message ?? e}`;
  });
  wire();
  $('app').removeAttribute('aria-busy');
  await Promise.all([update(), chat]);
}

function populateModels(models) {
  const groups = new Map();
  for (const m of models) {
    if (!groups.has(m.provider)) groups.set(m.provider, []);
    groups.get(m.provider).push(m);
  }
  const select = $('model');
  fill(select,
    [...groups].map(([provider, models]) =>
      h('optgroup', { label: PROVIDERS[provider] ?? provider },
        models.map((m) => h('option', { value: m.model }, `${m.model} · ${m.contextWindow ? short(m.contextWindow) : '?'}`)))),
    h('optgroup', { label: 'Custom' }, h('option', { value: CUSTOM }, 'Other model (type a name)…')));
  select.value = sample.model;
  select.disabled = false;
}

function modelName() {
  const v = $('model').value;
  return v === CUSTOM ? $('custom-model').value.trim() || 'custom-model' : v;
}

/** The guard config from the controls; blank fields are left out (ctxguard's defaults). */
function config() {
  const cfg = { model: modelName(), format: $('format').value };
  for (const k of LIMITS) {
    const v = $(`limit-${k}`).value.trim();
    if (v !== '') cfg[k] = Number(v);
  }
  // What observeUsage learned survives a new guard (another model, other limits).
  if (calibrationState) cfg.calibration = calibrationState;
  return { ...cfg, ...guardConfig() };
}

/** The calibration state the guard learned from the reported usage typed in the page. */
let calibrationState = null;

/** "Observe": the reported input tokens for the request as the page would send it. */
async function observeUsage() {
  const reported = Number($('usage-reported').value);
  const out = $('usage-result');
  if (!Number.isInteger(reported) || reported <= 0 || !guard) {
    out.textContent = 'Type the whole number of input tokens the provider reported.';
    return;
  }
  try {
    const conv = currentConversation();
    const cfg = config();
    const arg = { guard: guard.id, reported, emergency: $('guard-emergency').checked };
    if (conv.tools !== undefined) arg.tools = conv.tools;
    if (conv.system !== undefined) arg.system = conv.system;
    const { summary, calibration } = await api.call('observe', arg, { messages: conv.messages });
    calibrationState = calibration;
    const last = summary?.last;
    const pctOff = last ? `${last.error >= 0 ? '+' : ''}${(last.error * 100).toFixed(1)} %` : '—';
    out.dataset.observations = String(summary?.observations ?? 0);
    out.textContent = last
      ? `Observation ${summary.observations} for ${cfg.model}: reported ${fmt(last.reported)}, ctxguard predicted ${fmt(last.predicted)} (${pctOff}${last.outlier ? ', an outlier: reported, not learned' : ''}). ` +
        (summary.applied
          ? `Counts are now calibrated × ${summary.correction.toFixed(3)}.`
          : guard.model.kind === 'exact'
            ? 'Exact counts are reported, never corrected.'
            : 'Estimates are calibrated from the third observation on.')
      : 'Observed.';
    $('usage-reset').hidden = false;
    update();
  } catch (e) {
    out.textContent = `${e?.code ?? e?.name ?? 'Error'}: ${e?.message ?? e}`;
  }
}

function guardConfig() {
  const cfg = {};
  for (const k of GUARD_NUMBERS) {
    const v = $(`guard-${k}`).value.trim();
    if (v !== '') cfg[k] = Number(v);
  }
  const tool = $('guard-retrievalTool').value.trim();
  if (tool !== '') cfg.retrievalTool = tool;
  const clear = {};
  for (const k of CLEAR_NUMBERS) {
    const v = $(`guard-${k}`).value.trim();
    if (v !== '') clear[k] = Number(v);
  }
  if (Object.keys(clear).length) cfg.clearToolOutputs = clear;
  if ($('guard-edits').value !== '') cfg.edits = $('guard-edits').value;
  return cfg;
}

function setPageGuards() {
  for (const k of [...GUARD_NUMBERS, ...CLEAR_NUMBERS]) $(`guard-${k}`).value = PAGE_GUARDS[k] ?? '';
  $('guard-edits').value = PAGE_GUARDS.edits;
}

/** Greyed placeholders of the source-guard fields: what a blank one resolves to (`guard.sourceLimits`). */
function showGuardDefaults(limits) {
  for (const k of GUARD_NUMBERS) $(`guard-${k}`).placeholder = String(limits[k]);
}

/**
 * A new guard (in the worker) for `cfg`. When ctxguard rejects the options and the same config
 * without the source-guard fields is accepted, the error is marked as being about those fields.
 */
async function makeGuard(cfg) {
  try {
    return await api.createGuard(cfg);
  } catch (e) {
    const guardKeys = Object.keys(guardConfig());
    if (e?.code === 'INVALID_OPTIONS' && guardKeys.length) {
      const rest = Object.fromEntries(Object.entries(cfg).filter(([k]) => !guardKeys.includes(k)));
      try {
        (await api.createGuard(rest)).free();
        e.aboutGuards = true;
      } catch {
        // Not (only) the guard fields: reported as it is.
      }
    }
    throw e;
  }
}

/** The model's facts and the budgets blank fields resolve to, from the worker (cached by name). */
async function modelFacts(name) {
  if (!factsCache.has(name)) factsCache.set(name, await api.call('facts', { model: name }));
  return factsCache.get(name);
}

function showModelFacts({ info, known, ratios }) {
  const fact = (k, v, id) => [h('dt', {}, k), h('dd', { id }, v)];
  fill($('model-facts'),
    fact('Provider', PROVIDERS[info.provider] ?? info.provider),
    fact('Tokenizer', `${info.encoding} · ${info.kind === 'exact' ? 'exact' : `estimate ×${info.estimateFactor.toFixed(2)}`}`, 'model-tokenizer'),
    fact('Window', info.contextWindow ? fmt(info.contextWindow) : 'unknown — set one'),
    fact('Max output', info.maxOutputTokens ? fmt(info.maxOutputTokens) : 'unknown'),
    info.known ? null : fact('Note', 'Not in the table: defaults for unknown models.'));
  // Greyed placeholders show what a blank field resolves to.
  // An unknown model has no window: only that field is required; the ratios have their defaults.
  const placeholders = known
    ? { ...known, economicBudget: 'none' }
    : { contextWindow: 'required', maxOutputTokens: 'window', reservedOutputTokens: 'auto', economicBudget: 'none', triggerRatio: ratios?.triggerRatio ?? '', targetRatio: ratios?.targetRatio ?? '' };
  for (const k of LIMITS) $(`limit-${k}`).placeholder = String(placeholders[k] ?? '');
}

function clearError() {
  $('error').hidden = true;
  $('results').classList.remove('stale');
  $('conversation').removeAttribute('aria-invalid');
  $('limits').classList.remove('invalid');
  $('guards').classList.remove('invalid');
  $('conversation-error').hidden = true;
  $('limits-error').hidden = true;
  $('guards-error').hidden = true;
}

function showError(e) {
  const ours = e?.name === 'CtxguardError';
  // A PageError raised in the worker (parsing a loaded file) arrives as an Error named PageError.
  const pageError = e instanceof PageError || e?.name === 'PageError';
  const code = e?.code ?? (pageError ? 'PAGE' : 'UNEXPECTED');
  const where = ours ? 'ctxguard' : pageError ? 'page' : e?.name ?? 'error';
  const aboutGuards = e?.aboutGuards === true;
  const aboutBudget = !aboutGuards && BUDGET_CODES.has(code);
  fill($('error'),
    h('p', { class: 'error-title' },
      h('span', { class: 'error-icon', 'aria-hidden': 'true' }, '✕'),
      { UNKNOWN_MODEL: 'This model is not in the table', INVALID_BUDGET: 'These limits are not valid', INVALID_OPTIONS: 'These settings are not valid' }[code] ?? 'This conversation cannot be measured'),
    h('p', {},
      h('code', { id: 'error-code', class: 'code' }, code), ' ',
      h('span', { id: 'error-message' }, e?.message ?? String(e)),
      typeof e?.index === 'number' && !new RegExp(`\\[${e.index}\\]|message #?${e.index}\\b`).test(e?.message ?? '') ? h('span', { class: 'muted' }, ` (message #${e.index})`) : null),
    h('p', { class: 'muted small' }, `Reported by ${where}.`, measuredOnce ? ' The figures below are from the last valid input.' : ''));
  $('error').hidden = false;
  if (measuredOnce) $('results').classList.add('stale');
  if (aboutGuards) $('guards').classList.add('invalid');
  else if (aboutBudget) $('limits').classList.add('invalid');
  else $('conversation').setAttribute('aria-invalid', 'true');
  // The same code next to the control the user is editing, which may be far from the results.
  const near = $(aboutGuards ? 'guards-error' : aboutBudget ? 'limits-error' : 'conversation-error');
  fill(near, '✕ ', h('code', {}, code), ' ', e?.message ?? String(e));
  near.hidden = false;
  document.documentElement.dataset.status = 'error';
  setStatus(`Error: ${code}`);
}

/** The conversation to measure: the loaded one, or the editor's text parsed here. */
function currentConversation() {
  return loaded ? loaded.conv : parseConversation($('conversation').value);
}

/** Marks the results busy (a pass or a compaction is running in the worker). */
function setBusy(on) {
  $('results').setAttribute('aria-busy', String(on));
}

let progressTimer = 0;
/** The progress indicator: `event` = { label, done?, of? }, or null to hide it. */
function progress(event) {
  const box = $('pass-progress');
  if (event === null) {
    clearTimeout(progressTimer);
    progressTimer = 0;
    box.hidden = true;
    return;
  }
  document.documentElement.dataset.progressEvents = String(++progressEvents);
  $('pass-progress-text').textContent = event.label ?? 'Working…';
  const bar = $('pass-progress-bar');
  if (typeof event.done === 'number' && typeof event.of === 'number') {
    bar.max = event.of;
    bar.value = event.done;
  } else bar.removeAttribute('value');
  // Shown only when the work takes a while, so a quick pass does not flash it.
  if (box.hidden && !progressTimer) {
    progressTimer = setTimeout(() => {
      progressTimer = 0;
      box.hidden = false;
    }, PROGRESS_DELAY_MS);
  }
}

/** One pass: measure, guard and count in the worker, then render. */
async function pass() {
  try {
    showModelFacts(await modelFacts(modelName()));
    const cfg = config();
    const key = JSON.stringify(cfg);
    if (key !== guardKey) {
      guard?.free();
      guard = null;
      guardKey = '';
      guard = await makeGuard(cfg);
      guardKey = key;
    }
    const conv = currentConversation();
    const opts = {};
    if (conv.tools !== undefined) opts.tools = conv.tools;
    if (conv.system !== undefined) opts.system = conv.system;
    const count = Array.isArray(conv.messages) ? conv.messages.length : 0;
    progress({ label: `Measuring ${fmt(count)} messages in the worker…`, done: 0, of: 4 });
    const t0 = performance.now();
    // User Timing marks (DevTools' performance panel; the page test prints them next to long tasks).
    performance.mark('ctxguard:pass-start');
    const r = await api.call('pass', { guard: guard.id, format: cfg.format, model: cfg.model, emergency: $('guard-emergency').checked, ...opts }, {
      messages: conv.messages,
      onProgress: (e) => progress({ ...e, label: `${e.label} (${fmt(count)} messages, in the worker)…` }),
    });
    const t1 = performance.now();
    performance.mark('ctxguard:pass-result');
    progress({ label: `Drawing ${fmt(count)} messages…`, done: 4, of: 4 });
    // The model-visible request: the raw messages with the ones the guards changed replaced;
    // Anthropic's system and the AI SDK's `system` option come back from the guard (the AI SDK's
    // system messages in place, as the worker put them back), OpenAI's is unchanged.
    const visibleMessages = r.visible ?? conv.messages.map((m, i) => r.changed[i] ?? m);
    const visible = { messages: visibleMessages, tools: conv.tools, system: cfg.format === 'openai' ? conv.system : r.system ?? undefined };
    clearError();
    showGuardDefaults(r.sourceLimits);
    renderBudget($('budget'), r.metrics, r.raw);
    renderBreakdown($('breakdown'), r.metrics, guard.model, r.raw);
    renderTraces($('traces-card'), r.traces, r.delivered);
    const rows = rowsFor(cfg.format, conv, r.counts.places);
    const vrows = rowsFor(cfg.format, visible, r.vcounts.places);
    renderAges($('ages-card'), { rows, counts: r.counts, vrows, vcounts: r.vcounts, traces: r.traces, metrics: r.metrics, protect: cfg.clearToolOutputs?.protectTokens ?? null });
    renderMessages($('messages-card'), rows, r.counts, { rows: vrows, counts: r.vcounts });
    reader.update(r.attachments, new Map(r.previews), { encoding: guard.model.encoding, format: cfg.format });
    // `source`: what the conversation was read from (the editor's text, or the loaded file), to tell a new conversation from the same one read again.
    lastValid = { cfg, conv, usedTokens: r.metrics.usedTokens, source: loaded ?? $('conversation').value };
    compaction?.update();
    measuredOnce = true;
    performance.mark('ctxguard:pass-drawn');
    document.documentElement.dataset.status = 'ready';
    const ms = (t) => (t < 10 ? t.toFixed(1) : String(Math.round(t)));
    setStatus(`ctxguard ${api.version} in a Web Worker · measured in ${ms(r.ms.measure)} ms · guarded in ${ms(r.ms.guard)} ms · pass ${ms(t1 - t0)} ms`);
  } catch (e) {
    lastValid = null;
    compaction?.update();
    clearError();
    showError(e);
  }
}

let running = null;
let queued = false;
/**
 * Runs a pass; a change during a pass queues one more (the latest input wins). <html data-passes>
 * counts when no pass is left to run, so a test that waits for it sees the final state.
 */
function update() {
  if (running) {
    queued = true;
    return running;
  }
  setBusy(true);
  running = (async () => {
    do {
      queued = false;
      await pass();
    } while (queued);
  })().finally(() => {
    running = null;
    progress(null);
    setBusy(false);
    document.documentElement.dataset.passes = String(++passes);
  });
  return running;
}

function debounce(fn, ms) {
  let t = 0;
  return () => {
    clearTimeout(t);
    t = setTimeout(fn, ms);
  };
}

/** The format the editor shows the unedited sample in (null once it is edited or replaced). */
let sampleFormat = null;

/** Puts text back in the editor (a loaded large conversation is dropped). */
function useEditor(text) {
  loaded = null;
  sampleFormat = null;
  const editor = $('conversation');
  editor.readOnly = false;
  editor.placeholder = '';
  editor.value = text;
}

const FORMAT_NAMES = { openai: 'OpenAI Chat Completions', anthropic: 'Anthropic Messages', 'ai-sdk': 'Vercel AI SDK model messages', 'openai-responses': 'OpenAI Responses input items', gemini: 'Gemini contents' };
/** The sample in `format` (the selected one; the sample's own at start). */
function restoreSample(format = sample.format) {
  useEditor(JSON.stringify(sampleIn(format), null, 2));
  $('format').value = format;
  sampleFormat = format;
  $('source-note').textContent = `The built-in sample (${FORMAT_NAMES[format]}): a coding assistant debugging a failing build. Edit it, paste your own, or load a file; the format selector converts it while it is unedited.`;
}

/** A format picked while the unedited sample is shown converts the sample; anything else is re-read as it is. */
function formatChanged() {
  const format = $('format').value;
  if (sampleFormat !== null && !loaded) restoreSample(format);
  update();
}

/** Selects the format ctxguard recognizes in the text (detectFormat, in the worker); a text that does not parse or has no format leaves the selection. */
async function pickFormat(text) {
  let conv;
  try {
    conv = parseConversation(text);
  } catch {
    return; // update() reports the parse error.
  }
  const format = await api.call('detect', { conv });
  if (format) $('format').value = format;
}

async function loadFile(file) {
  if (file.size > EDITOR_LIMIT) {
    await loadLarge(file);
    return;
  }
  try {
    let text = await file.text();
    // Pretty-print what parses, so the editor is readable; anything else is shown as it is.
    try {
      text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // update() reports the parse error.
    }
    useEditor(text);
    $('source-note').textContent = `Loaded ${file.name} (${fmt(file.size)} bytes).`;
    await pickFormat(text);
  } catch (e) {
    showError(new PageError('FILE_READ', `Could not read ${file.name}: ${e?.message ?? e}`));
    return;
  }
  update();
}

/**
 * A large file is read and parsed in the worker, and kept out of the editor (a textarea with
 * megabytes of text makes every keystroke and layout slow).
 */
async function loadLarge(file) {
  setBusy(true);
  let parsed;
  try {
    parsed = await api.call('parse', { file }, { onProgress: (e) => progress({ label: `${e.label} in the worker…` }) });
  } catch (e) {
    progress(null);
    setBusy(false);
    showError(e?.code ? e : new PageError('FILE_READ', `Could not read ${file.name}: ${e?.message ?? e}`));
    document.documentElement.dataset.passes = String(++passes);
    return;
  }
  performance.mark('ctxguard:parsed');
  loaded = { conv: parsed.conv, name: file.name, chars: parsed.chars };
  const editor = $('conversation');
  editor.value = '';
  editor.readOnly = true;
  const n = Array.isArray(parsed.conv.messages) ? parsed.conv.messages.length : 0;
  editor.placeholder = [
    file.name,
    `${fmt(n)} messages, ${(file.size / 1e6).toFixed(1)} MB`,
    '',
    'Too large for the editor: it is measured',
    'as loaded (parsed in the worker).',
    '',
    'Restore the sample, or load a smaller',
    'file, to edit a conversation here.',
  ].join('\n');
  $('source-note').textContent = `Loaded ${file.name} (${fmt(file.size)} bytes, ${fmt(n)} messages) — not shown in the editor.`;
  if (parsed.format) $('format').value = parsed.format;
  update();
}

function wire() {
  const soon = debounce(update, 150);
  $('model').addEventListener('change', () => {
    $('custom-model-field').hidden = $('model').value !== CUSTOM;
    update();
  });
  $('custom-model').addEventListener('input', debounce(update, 300));
  $('format').addEventListener('change', formatChanged);
  for (const k of LIMITS) $(`limit-${k}`).addEventListener('input', soon);
  for (const k of [...GUARD_NUMBERS, ...CLEAR_NUMBERS, 'retrievalTool']) $(`guard-${k}`).addEventListener('input', soon);
  $('guard-emergency').addEventListener('change', update);
  $('guard-edits').addEventListener('change', update);
  $('page-guards').addEventListener('click', () => {
    setPageGuards();
    update();
  });
  $('default-guards').addEventListener('click', () => {
    for (const k of [...GUARD_NUMBERS, ...CLEAR_NUMBERS]) $(`guard-${k}`).value = '';
    $('guard-edits').value = '';
    update();
  });
  $('reset-limits').addEventListener('click', () => {
    for (const k of LIMITS) $(`limit-${k}`).value = '';
    update();
  });
  // A paste picks the format it recognises (as a loaded file does); typing never switches it.
  let pasted = false;
  $('conversation').addEventListener('paste', () => {
    pasted = true;
  });
  $('conversation').addEventListener('input', debounce(async () => {
    $('source-note').textContent = 'Your conversation (edited in the page).';
    sampleFormat = null;
    if (pasted) {
      pasted = false;
      await pickFormat($('conversation').value);
    }
    update();
  }, 300));
  $('usage-observe').addEventListener('click', observeUsage);
  $('usage-reset').addEventListener('click', () => {
    calibrationState = null;
    $('usage-result').textContent = 'Calibration forgotten: counts are the table\'s again.';
    $('usage-reset').hidden = true;
    update();
  });
  $('use-sample').addEventListener('click', () => {
    restoreSample($('format').value);
    update();
  });
  $('file').addEventListener('change', () => {
    const file = $('file').files?.[0];
    if (file) loadFile(file);
    $('file').value = '';
  });
}

boot().catch((e) => fatal('The page failed to start', `${e?.name ?? 'Error'}: ${e?.message ?? e}`));
