// The page: loads ctxguard, wires the controls, and redraws the views after every change.
// Plain ES modules, no build step; the package is imported from /pkg/ at run time so that a
// missing or broken build, or a browser without WebAssembly, gets a clear message.

import { findAttachments, previewOffsets } from './attachments.js';
import { renderBreakdown, renderBudget } from './budget-view.js';
import { createCompaction } from './compaction-view.js';
import { PageError, guessFormat, parseConversation, rowsOf } from './conversation.js';
import { fill, fmt, h, short } from './dom.js';
import { renderMessages } from './messages-view.js';
import { createReader } from './reader-view.js';
import { sample } from './sample.js';
import { renderTraces } from './traces-view.js';

document.documentElement.dataset.status = 'booting';

const $ = (id) => document.getElementById(id);
const LIMITS = ['contextWindow', 'maxOutputTokens', 'reservedOutputTokens', 'economicBudget', 'triggerRatio', 'targetRatio'];
const BUDGET_CODES = new Set(['INVALID_BUDGET', 'UNKNOWN_MODEL', 'INVALID_OPTIONS']);
const PROVIDERS = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google', meta: 'Meta', alibaba: 'Alibaba (Qwen)', deepseek: 'DeepSeek', mistral: 'Mistral', other: 'Other' };
const CUSTOM = '__custom__';
const REQUIRED = ['ContextGuard', 'countMessages', 'knownModels', 'modelInfo', 'readAttachment', 'readAttachmentTool', 'version'];
/** Source-guard fields of the guard config that take a token count. */
const GUARD_NUMBERS = ['toolOutputLimit', 'toolOutputTotal', 'attachmentBudget'];
/**
 * The page starts below ctxguard's defaults so that the built-in sample shows the guards at work:
 * its log and JSON outputs are ~5,000 tokens each (the default limit is 8,000) and its two
 * attachments ~540 tokens together (the default budget is min(16,000, usable / 8)).
 */
const PAGE_GUARDS = { toolOutputLimit: 1000, attachmentBudget: 400 };

let api = null;
let guard = null;
let guardKey = '';
let measuredOnce = false;
/** Passes so far; exposed as <html data-passes> so tests can wait for the next one. */
let passes = 0;
let reader = null;
let compaction = null;
/** The last valid input, for the Compaction card: { cfg, conv, usedTokens }. */
let lastValid = null;

function setStatus(text) {
  $('status').textContent = text;
}

function fatal(title, detail) {
  document.documentElement.dataset.status = 'fatal';
  setStatus('Not running');
  $('app').hidden = true;
  fill($('fatal'), h('h2', {}, title), h('p', {}, detail));
  $('fatal').hidden = false;
}

async function boot() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') {
    fatal('WebAssembly is not available', 'ctxguard counts tokens with a WebAssembly module, and this browser has WebAssembly switched off or does not support it. Use a current browser, or allow WebAssembly for this page.');
    return;
  }
  try {
    api = await import('/pkg/index.js');
  } catch (e) {
    fatal('ctxguard could not be loaded', `${e?.name ?? 'Error'}: ${e?.message ?? e}. The page expects the built package at /pkg/index.js — build it (make build) and serve the page with scripts/serve.mjs.`);
    return;
  }
  const missing = REQUIRED.filter((name) => typeof api[name] !== 'function');
  if (missing.length) {
    fatal('This build of ctxguard is incomplete', `The package at /pkg/ does not export ${missing.join(', ')}. Rebuild it from a current checkout.`);
    return;
  }
  populateModels();
  restoreSample();
  setPageGuards();
  $('guards-note').replaceChildren(
    h('code', {}, 'guard.guardSources()'), ', before every model call. The page starts at ',
    h('strong', {}, `${fmt(PAGE_GUARDS.toolOutputLimit)} and ${fmt(PAGE_GUARDS.attachmentBudget)}`),
    `, below ctxguard's defaults (${fmt(8000)}; min(16,000, usable ÷ 8)), so that the sample's ~5,000-token outputs and its PDF report show the effect. Blank fields use the defaults (greyed).`);
  reader = createReader($('reader-card'), api);
  if (typeof api.resolveHistory === 'function') compaction = createCompaction($('compaction-card'), api, () => lastValid);
  else $('compaction-card').hidden = true;
  wire();
  $('app').removeAttribute('aria-busy');
  update();
}

function populateModels() {
  const groups = new Map();
  for (const m of api.knownModels()) {
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
  return { ...cfg, ...guardConfig() };
}

function guardConfig() {
  const cfg = {};
  for (const k of GUARD_NUMBERS) {
    const v = $(`guard-${k}`).value.trim();
    if (v !== '') cfg[k] = Number(v);
  }
  const tool = $('guard-retrievalTool').value.trim();
  if (tool !== '') cfg.retrievalTool = tool;
  return cfg;
}

function setPageGuards() {
  for (const k of GUARD_NUMBERS) $(`guard-${k}`).value = PAGE_GUARDS[k] ?? '';
}

/** Greyed defaults of the source-guard fields, from the usable limit (src/guards/sources.rs). */
function showGuardDefaults(usable) {
  $('guard-toolOutputLimit').placeholder = '8000';
  $('guard-toolOutputTotal').placeholder = String(Math.floor(usable * 0.5));
  $('guard-attachmentBudget').placeholder = String(Math.min(16000, Math.floor(usable * 0.125)));
}

/**
 * A new guard for `cfg`. When ctxguard rejects the options and the same config without the
 * source-guard fields is accepted, the error is marked as being about those fields.
 */
function makeGuard(cfg) {
  try {
    return new api.ContextGuard(cfg);
  } catch (e) {
    const guardKeys = Object.keys(guardConfig());
    if (e?.code === 'INVALID_OPTIONS' && guardKeys.length) {
      const rest = Object.fromEntries(Object.entries(cfg).filter(([k]) => !guardKeys.includes(k)));
      try {
        new api.ContextGuard(rest).free();
        e.aboutGuards = true;
      } catch {
        // Not (only) the guard fields: reported as it is.
      }
    }
    throw e;
  }
}

function showModelFacts() {
  const info = api.modelInfo(modelName());
  const fact = (k, v, id) => [h('dt', {}, k), h('dd', { id }, v)];
  fill($('model-facts'),
    fact('Provider', PROVIDERS[info.provider] ?? info.provider),
    fact('Tokenizer', `${info.encoding} · ${info.kind === 'exact' ? 'exact' : `estimate ×${info.estimateFactor.toFixed(2)}`}`, 'model-tokenizer'),
    fact('Window', info.contextWindow ? fmt(info.contextWindow) : 'unknown — set one'),
    fact('Max output', info.maxOutputTokens ? fmt(info.maxOutputTokens) : 'unknown'),
    info.known ? null : fact('Note', 'Not in the table: defaults for unknown models.'));
  // Greyed placeholders show what a blank field resolves to.
  const budget = (cfg) => {
    try {
      const g = new api.ContextGuard(cfg);
      const b = g.budget;
      g.free();
      return b;
    } catch {
      return null;
    }
  };
  // An unknown model has no window: only that field is required; the ratios have their defaults.
  const known = budget({ model: info.model });
  const ratios = known ?? budget({ model: info.model, contextWindow: 1_000_000 });
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
  const code = e?.code ?? (e instanceof PageError ? 'PAGE' : 'UNEXPECTED');
  const where = ours ? 'ctxguard' : e instanceof PageError ? 'page' : e?.name ?? 'error';
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

function update() {
  document.documentElement.dataset.passes = String(++passes);
  clearError();
  try {
    showModelFacts();
    const cfg = config();
    const key = JSON.stringify(cfg);
    if (key !== guardKey) {
      guard?.free();
      guard = null;
      guardKey = '';
      guard = makeGuard(cfg);
      guardKey = key;
    }
    showGuardDefaults(guard.budget.usableLimit);
    const conv = parseConversation($('conversation').value);
    const opts = {};
    if (conv.tools !== undefined) opts.tools = conv.tools;
    if (conv.system !== undefined) opts.system = conv.system;
    const t0 = performance.now();
    const raw = guard.measure(conv.messages, opts);
    const t1 = performance.now();
    let delivered = 0;
    const result = guard.guardSources(conv.messages, { ...opts, emergency: $('guard-emergency').checked, onTrace: () => delivered++ });
    const t2 = performance.now();
    // The model-visible request: Anthropic's system comes back from the guard; OpenAI's is unchanged.
    const visible = { messages: result.messages, tools: conv.tools, system: cfg.format === 'anthropic' ? result.system ?? undefined : conv.system };
    const counts = api.countMessages(conv.messages, { model: cfg.model, format: cfg.format, ...opts });
    const vcounts = api.countMessages(visible.messages, { model: cfg.model, format: cfg.format, ...opts, ...(visible.system === undefined ? {} : { system: visible.system }) });
    renderBudget($('budget'), result.metrics, raw);
    renderBreakdown($('breakdown'), result.metrics, guard.model, raw);
    renderTraces($('traces-card'), result.traces, delivered);
    renderMessages($('messages-card'), rowsOf(cfg.format, conv), counts, { rows: rowsOf(cfg.format, visible), counts: vcounts });
    reader.update(findAttachments(conv), previewOffsets(result.messages), { encoding: guard.model.encoding, format: cfg.format });
    lastValid = { cfg, conv, usedTokens: result.metrics.usedTokens };
    compaction?.update();
    measuredOnce = true;
    document.documentElement.dataset.status = 'ready';
    const ms = (t) => (t < 10 ? t.toFixed(1) : String(Math.round(t)));
    setStatus(`ctxguard ${api.version()} · measured in ${ms(t1 - t0)} ms · guarded in ${ms(t2 - t1)} ms`);
  } catch (e) {
    lastValid = null;
    compaction?.update();
    showError(e);
  }
}

function debounce(fn, ms) {
  let t = 0;
  return () => {
    clearTimeout(t);
    t = setTimeout(fn, ms);
  };
}

function restoreSample() {
  $('conversation').value = JSON.stringify({ messages: sample.messages, tools: sample.tools }, null, 2);
  $('format').value = sample.format;
  $('source-note').textContent = 'The built-in sample: a coding assistant debugging a failing build. Edit it, paste your own, or load a file.';
}

async function loadFile(file) {
  try {
    let text = await file.text();
    // Pretty-print what parses, so the editor is readable; anything else is shown as it is.
    try {
      if (text.length < 8_000_000) text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // update() reports the parse error.
    }
    $('conversation').value = text;
    $('source-note').textContent = `Loaded ${file.name} (${fmt(file.size)} bytes).`;
    try {
      const format = guessFormat(parseConversation(text));
      if (format) $('format').value = format;
    } catch {
      // update() reports the parse error.
    }
  } catch (e) {
    showError(new PageError('FILE_READ', `Could not read ${file.name}: ${e?.message ?? e}`));
    return;
  }
  update();
}

function wire() {
  const soon = debounce(update, 150);
  $('model').addEventListener('change', () => {
    $('custom-model-field').hidden = $('model').value !== CUSTOM;
    update();
  });
  $('custom-model').addEventListener('input', debounce(update, 300));
  $('format').addEventListener('change', update);
  for (const k of LIMITS) $(`limit-${k}`).addEventListener('input', soon);
  for (const k of [...GUARD_NUMBERS, 'retrievalTool']) $(`guard-${k}`).addEventListener('input', soon);
  $('guard-emergency').addEventListener('change', update);
  $('page-guards').addEventListener('click', () => {
    setPageGuards();
    update();
  });
  $('default-guards').addEventListener('click', () => {
    for (const k of GUARD_NUMBERS) $(`guard-${k}`).value = '';
    update();
  });
  $('reset-limits').addEventListener('click', () => {
    for (const k of LIMITS) $(`limit-${k}`).value = '';
    update();
  });
  $('conversation').addEventListener('input', debounce(() => {
    $('source-note').textContent = 'Your conversation (edited in the page).';
    update();
  }, 300));
  $('use-sample').addEventListener('click', () => {
    restoreSample();
    update();
  });
  $('file').addEventListener('change', () => {
    const file = $('file').files?.[0];
    if (file) loadFile(file);
    $('file').value = '';
  });
}

boot().catch((e) => fatal('The page failed to start', `${e?.name ?? 'Error'}: ${e?.message ?? e}`));
