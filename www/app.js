// The page: loads ctxguard, wires the controls, and redraws the views after every change.
// Plain ES modules, no build step; the package is imported from /pkg/ at run time so that a
// missing or broken build, or a browser without WebAssembly, gets a clear message.

import { renderBreakdown, renderBudget } from './budget-view.js';
import { PageError, guessFormat, parseConversation, rowsOf } from './conversation.js';
import { fill, fmt, h, short } from './dom.js';
import { renderMessages } from './messages-view.js';
import { sample } from './sample.js';

document.documentElement.dataset.status = 'booting';

const $ = (id) => document.getElementById(id);
const LIMITS = ['contextWindow', 'maxOutputTokens', 'reservedOutputTokens', 'economicBudget', 'triggerRatio', 'targetRatio'];
const BUDGET_CODES = new Set(['INVALID_BUDGET', 'UNKNOWN_MODEL', 'INVALID_OPTIONS']);
const PROVIDERS = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google', meta: 'Meta', alibaba: 'Alibaba (Qwen)', deepseek: 'DeepSeek', mistral: 'Mistral', other: 'Other' };
const CUSTOM = '__custom__';
const REQUIRED = ['ContextGuard', 'countMessages', 'knownModels', 'modelInfo', 'version'];

let api = null;
let guard = null;
let guardKey = '';
let measuredOnce = false;
/** Passes so far; exposed as <html data-passes> so tests can wait for the next one. */
let passes = 0;

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

/** The guard config from the controls; blank limit fields are left out (model defaults). */
function config() {
  const cfg = { model: modelName(), format: $('format').value };
  for (const k of LIMITS) {
    const v = $(`limit-${k}`).value.trim();
    if (v !== '') cfg[k] = Number(v);
  }
  return cfg;
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
  $('conversation-error').hidden = true;
  $('limits-error').hidden = true;
}

function showError(e) {
  const ours = e?.name === 'CtxguardError';
  const code = e?.code ?? (e instanceof PageError ? 'PAGE' : 'UNEXPECTED');
  const where = ours ? 'ctxguard' : e instanceof PageError ? 'page' : e?.name ?? 'error';
  const aboutBudget = BUDGET_CODES.has(code);
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
  if (aboutBudget) $('limits').classList.add('invalid');
  else $('conversation').setAttribute('aria-invalid', 'true');
  // The same code next to the control the user is editing, which may be far from the results.
  const near = $(aboutBudget ? 'limits-error' : 'conversation-error');
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
      guard = new api.ContextGuard(cfg);
      guardKey = key;
    }
    const conv = parseConversation($('conversation').value);
    const opts = {};
    if (conv.tools !== undefined) opts.tools = conv.tools;
    if (conv.system !== undefined) opts.system = conv.system;
    const t0 = performance.now();
    const metrics = guard.measure(conv.messages, opts);
    const ms = performance.now() - t0;
    const counts = api.countMessages(conv.messages, { model: cfg.model, format: cfg.format, ...opts });
    renderBudget($('budget'), metrics);
    renderBreakdown($('breakdown'), metrics, guard.model);
    renderMessages($('messages-card'), rowsOf(cfg.format, conv), counts);
    measuredOnce = true;
    document.documentElement.dataset.status = 'ready';
    setStatus(`ctxguard ${api.version()} · measured in ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);
  } catch (e) {
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
