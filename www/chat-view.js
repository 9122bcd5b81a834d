// The chat at the top of the page: what a chat client does with ctxguard, send by send. Each
// send passes the whole display history to guard.prepare() in the worker (as the app keeps it:
// every message it shows) and shows what that send carried — the model-visible messages, their
// tokens against the usable limit, and what ctxguard did (a clearing step, a summary, a message
// left out). The model is a stand-in on this page: it answers each message with a read_file call,
// the file's text as the tool output, and a short answer, so the window fills in a few sends.
// The display history never changes; only what is sent does.

import { fill, fmt, h } from './dom.js';
import { fileOf } from './session-turns.js';
import { builtinSummarizer } from './summarizers.js';

/** The chat's guard: a small window, so that a few sends show clearing and a summary. */
// `edits: 'trigger'`, as the page's other guards (app.js, PAGE_GUARDS): each layer shows in a short chat.
export const CHAT_CONFIG = { model: 'gpt-4o', contextWindow: 6000, edits: 'trigger' };
/** Tokens of the file each stand-in answer reads (about). */
const FILE_TOKENS = 600;
const TOOLS = [{ type: 'function', function: { name: 'read_file', description: 'Read a file of the repository.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }];
const SYSTEM = 'You help with the billing code of this repository. Read files with read_file before answering.';

const PROMPTS = [
  'Is the rounding in the billing period code consistent?',
  'And how are refunds prorated?',
  'Check the VAT code too, please.',
  'Where is a ledger entry created?',
  'How is an account balance computed?',
  'Which invoices API handles credit notes?',
  'Do the date helpers handle leap years?',
  'Compare that with how payments are scheduled.',
];

/** The next message "Send a turn" types: deterministic, so a run can be compared with another. */
export const autoPrompt = (n) => `${PROMPTS[n % PROMPTS.length]}${n >= PROMPTS.length ? ` (round ${Math.floor(n / PROMPTS.length) + 1})` : ''}`;

/** The stand-in model's answer to send `n`: a read_file call, its output, and an answer (OpenAI Chat Completions shape). */
function standInReply(n, question) {
  const { path, text } = fileOf(n, FILE_TOKENS);
  const id = `call_chat_${n}`;
  return [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } }] },
    { role: 'tool', tool_call_id: id, content: text },
    { role: 'assistant', content: `I read ${path}. About “${question.length > 60 ? `${question.slice(0, 59)}…` : question}”: every branch rounds with round(…, 2) after dividing by the number of days, so the results agree to the cent with the rest of the billing code. Two things to watch: the rounding happens before the currency conversion, and a period of zero days would divide by zero; the callers check the period first. Next, I would read the callers.` },
  ];
}

/** A message's text for a one-line preview. */
function textOf(m) {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => p?.text ?? '').join(' ');
  if (m.tool_calls?.length) return m.tool_calls.map((c) => `${c.function?.name}(${c.function?.arguments ?? ''})`).join(', ');
  return '';
}

/** What a model-visible message is, for the list: a summary, a cleared or compacted tool output, or as it was. */
function kindOf(m) {
  const t = textOf(m);
  if (m.role === 'system' && /summary|Earlier part of the conversation/i.test(t) && !t.startsWith(SYSTEM)) return 'summary';
  if (m.role === 'tool' && t.startsWith('[ctxguard:cleared-tool-output]')) return 'cleared';
  if (m.role === 'tool' && t.includes('[ctxguard:compacted-tool-output]')) return 'compacted';
  return 'whole';
}

const KIND_LABEL = { summary: 'summary', cleared: 'cleared to a stub', compacted: 'compacted', whole: '' };

/** What ctxguard did in one send, as [kind, text] pairs, from prepare()'s result. */
export function eventsOf(r) {
  const events = [];
  for (const t of r.traces) {
    if (t.operation === 'tool_output_clear') events.push(['clear', `cleared ${fmt(t.messagesCleared ?? 0)} old tool output${t.messagesCleared === 1 ? '' : 's'}`]);
    if (t.operation === 'attachment_preview' && t.attachmentBlocksTruncated) events.push(['preview', `previewed ${fmt(t.attachmentBlocksTruncated)} attachment${t.attachmentBlocksTruncated === 1 ? '' : 's'}`]);
    if (t.operation === 'message_dropped') events.push(['dropped', `left out message ${t.messageIndex} (${t.reason.replace(/_/g, ' ')})`]);
  }
  if (r.degraded) events.push(['degraded', `degraded: ${r.degradedReason}`]);
  else if (r.compaction) events.push(['summary', `summarized ${fmt(r.compaction.removedItems)} messages: ${fmt(r.compaction.beforeTokens)} → ${fmt(r.compaction.afterTokens)} tokens`]);
  else if (r.metrics.memory.coveredMessages > 0) events.push(['remembered', `reused the summary of ${fmt(r.metrics.memory.coveredMessages)} messages`]);
  if (r.checkpoint) events.push(['checkpoint', 'checkpoint to store']);
  return events;
}

/**
 * @param root the chat section (its static markup is in index.html, so the first screen is the
 *             chat from the first paint; this wires it once the worker answers)
 * @param api  the page's worker (ctxguard/worker's WorkerConnection)
 */
export async function createChat(root, api) {
  const $ = (sel) => root.querySelector(sel);
  const log = $('#chat-log');
  const input = $('#chat-input');
  const form = $('#chat-form');
  const buttons = [$('#chat-send'), $('#chat-auto'), $('#chat-auto12')];
  const carried = $('#chat-carried');
  let guard = await api.createGuard(CHAT_CONFIG);
  let history = [{ role: 'system', content: SYSTEM }];
  let sends = 0;
  let busy = false;
  /** A run of sends ("Send 12 turns"): the buttons stay disabled until it ends. */
  let running = false;
  const summarize = builtinSummarizer({ delayMs: 300 });

  const setBusy = (on, label) => {
    busy = on;
    root.dataset.state = on || running ? 'sending' : 'ready';
    for (const b of buttons) b.disabled = on || running;
    input.disabled = false;
    $('#chat-status').textContent = label ?? '';
  };

  function bubble(m, extra = {}) {
    const cls = `msg ${m.role}${m.role === 'tool' ? ' tool' : ''}`;
    const body = m.role === 'tool'
      ? h('details', {}, h('summary', {}, `read_file output · ${fmt(m.content.length)} characters`), h('pre', {}, m.content.slice(0, 600), m.content.length > 600 ? '\n…' : ''))
      : m.tool_calls?.length
        ? h('p', { class: 'call' }, h('code', {}, textOf(m)))
        : h('p', {}, textOf(m));
    const li = h('li', { class: cls, ...extra }, body);
    log.append(li);
    log.scrollTop = log.scrollHeight;
    return li;
  }

  function showCarried(r, historyTokens, perMessage) {
    const m = r.metrics;
    const usable = m.usableLimit;
    const at = (n) => `${Math.min(100, (n / usable) * 100)}%`;
    const events = eventsOf(r);
    fill(carried,
      h('h3', {}, `What send ${sends} carried`),
      h('p', { class: 'carried-big' },
        h('strong', { id: 'chat-used' }, fmt(m.usedTokens)), ' tokens of ', h('strong', {}, fmt(usable)), ' usable ',
        h('span', { class: `state-pill state-${m.state}` }, m.state.replace(/_/g, ' '))),
      h('div', { class: 'chat-meter', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(usable), 'aria-valuenow': String(m.usedTokens), 'aria-label': 'Model input against the usable limit' },
        h('span', { class: `fill state-${m.state}`, style: { width: at(m.usedTokens) } }),
        h('span', { class: 'mark target', style: { left: at(m.targetLimit) }, title: `target ${fmt(m.targetLimit)}` }),
        h('span', { class: 'mark trigger', style: { left: at(m.triggerLimit) }, title: `trigger ${fmt(m.triggerLimit)}` })),
      h('p', { class: 'muted small' },
        `${fmt(r.messages.length)} of ${fmt(history.length)} messages sent · the display history is ${fmt(historyTokens)} tokens · trigger ${fmt(m.triggerLimit)}`),
      m.clearing && (m.clearing.cleared || m.clearing.compacted)
        ? h('p', { class: 'muted small', id: 'chat-clearing' }, `Tool outputs by age: ${fmt(m.clearing.cleared)} cleared to a stub, ${fmt(m.clearing.compacted)} compacted, the newest whole (${fmt(m.clearing.savedTokens)} tokens saved).`)
        : null,
      events.length
        ? h('ul', { class: 'chat-events' }, events.map(([k, t]) => h('li', { class: `ev ev-${k}`, 'data-kind': k }, t)))
        : h('p', { class: 'muted small' }, 'Nothing to do: everything fits as it is.'),
      h('ol', { class: 'chat-sent', 'aria-label': 'The messages sent to the model' },
        r.messages.map((msg, i) => {
          const kind = kindOf(msg);
          return h('li', { class: `sent ${msg.role} kind-${kind}`, 'data-kind': kind },
            h('span', { class: 'sent-role' }, msg.role),
            h('span', { class: 'sent-text' }, KIND_LABEL[kind] ? h('em', {}, `${KIND_LABEL[kind]} · `) : null, textOf(msg).replace(/\s+/g, ' ').slice(0, 120)),
            h('span', { class: 'sent-tokens' }, fmt(perMessage[i] ?? 0)));
        })));
  }

  async function send(text) {
    if (busy || !text.trim()) return;
    setBusy(true, 'guard.prepare() in the worker…');
    sends += 1;
    const n = sends;
    const user = { role: 'user', content: text.trim() };
    history.push(user);
    const li = bubble(user, { 'data-send': String(n) });
    try {
      const r = await guard.prepare(history, {
        tools: TOOLS,
        summarize: async (request) => {
          $('#chat-status').textContent = 'summarizing the older messages…';
          return summarize(request);
        },
      });
      const [visible, whole] = await Promise.all([
        api.countMessages(r.messages, { model: CHAT_CONFIG.model, tools: TOOLS }),
        api.countMessages(history, { model: CHAT_CONFIG.model, tools: TOOLS }),
      ]);
      const events = eventsOf(r);
      li.dataset.used = String(r.metrics.usedTokens);
      li.dataset.usable = String(r.metrics.usableLimit);
      li.dataset.sent = String(r.messages.length);
      li.dataset.history = String(history.length);
      li.dataset.events = events.map(([k]) => k).join(' ');
      li.append(h('p', { class: 'receipt' },
        `sent ${fmt(r.messages.length)} of ${fmt(history.length)} messages · ${fmt(r.metrics.usedTokens)} tokens`,
        events.filter(([k]) => k !== 'checkpoint').map(([k, t]) => h('span', { class: `ev ev-${k}` }, t))));
      showCarried(r, whole.total, visible.perMessage);
      for (const m of standInReply(n, user.content)) {
        history.push(m);
        bubble(m);
      }
      root.dataset.sends = String(n);
      setBusy(false);
    } catch (e) {
      li.append(h('p', { class: 'receipt error' }, `${e?.code ?? e?.name ?? 'Error'}: ${e?.message ?? e}`));
      setBusy(false, '');
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value;
    input.value = '';
    send(text);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  $('#chat-auto').addEventListener('click', () => send(autoPrompt(sends)));
  $('#chat-auto12').addEventListener('click', async () => {
    if (busy || running) return;
    running = true;
    try {
      for (let i = 0; i < 12; i++) await send(autoPrompt(sends));
    } finally {
      running = false;
      setBusy(false);
    }
  });
  $('#chat-reset').addEventListener('click', async () => {
    if (busy) return;
    guard.free();
    guard = await api.createGuard(CHAT_CONFIG);
    history = [{ role: 'system', content: SYSTEM }];
    sends = 0;
    delete root.dataset.sends;
    log.querySelectorAll('li:not(.welcome)').forEach((li) => li.remove());
    fill(carried, h('h3', {}, 'What each send carries'), h('p', { class: 'muted' }, 'Send a message: the model input of that send shows here.'));
  });
  input.placeholder = 'Ask about the billing code… (Enter sends)';
  setBusy(false);
}
