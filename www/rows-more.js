// The rows of the message list for the OpenAI Responses and Gemini formats (conversation.js's
// rowsOf describes the other three): one row per message ctxguard counts, in the order of
// countMessages' perMessage — the request's system first (`instructions`, `systemInstruction`),
// then one row per Responses item; a Gemini content is one row, except that each of its
// functionResponse parts is a row of its own, before the rest (docs/formats.md).

import { rowsOf } from './conversation.js';
import { messageText } from './sources-view.js';

const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);
const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

function row(wireIndex, role, raw, { ref = null, chips = [], text = messageText(raw) } = {}) {
  const head = text.length > 2000 ? text.slice(0, 2000) : text;
  return { wireIndex, role, ref, preview: clip(oneLine(head), 220), lines: text === '' ? 0 : text.split('\n').length, chars: text.length, chips, raw };
}

const RESPONSES_ROLE = { function_call: 'assistant', custom_tool_call: 'assistant', function_call_output: 'tool', custom_tool_call_output: 'tool', reasoning: 'assistant' };

function responsesRows({ messages, system }) {
  const names = new Map(messages.filter((m) => m?.call_id && m?.name).map((m) => [m.call_id, m.name]));
  const rows = system === undefined || system === null ? [] : [row('system', 'system', { content: system })];
  messages.forEach((m, i) => {
    const role = m?.role ?? RESPONSES_ROLE[m?.type] ?? m?.type ?? '?';
    const chips = [];
    for (const p of Array.isArray(m?.content) ? m.content : []) {
      if (p?.type === 'input_image') chips.push({ kind: 'image', label: `image${p.detail ? ` · ${p.detail}` : ''}` });
      else if (p?.type === 'input_file') chips.push({ kind: 'attachment', label: p.filename ?? 'file' });
    }
    if (m?.type === 'function_call' || m?.type === 'custom_tool_call') chips.push({ kind: 'tool', label: `${m.name}(${clip(m.arguments ?? m.input ?? '', 60)})` });
    else if (m?.type && !m.role && !RESPONSES_ROLE[m.type]) chips.push({ kind: 'other', label: m.type });
    const ref = m?.type?.endsWith('_output') && m.call_id ? `${names.get(m.call_id) ?? '?'} · ${m.call_id}` : null;
    rows.push(row(i, role, m, { ref, chips, text: m?.type === 'function_call' ? '' : messageText(m) }));
  });
  return rows;
}

function geminiRows({ messages, system }) {
  const rows = system === undefined || system === null ? [] : [row('system', 'system', typeof system === 'string' ? { content: system } : { parts: system.parts ?? [system].flat() })];
  messages.forEach((m, i) => {
    const parts = Array.isArray(m?.parts) ? m.parts : [];
    const responses = parts.filter((p) => p?.functionResponse);
    for (const p of responses) {
      const r = p.functionResponse;
      rows.push(row(i, 'tool', p, { ref: `${r.name ?? '?'}${r.id ? ` · ${r.id}` : ''}` }));
    }
    const rest = parts.filter((p) => !p?.functionResponse);
    if (responses.length && !rest.length) return;
    const chips = [];
    for (const p of rest) {
      if (p?.functionCall) chips.push({ kind: 'tool', label: `${p.functionCall.name}(${clip(JSON.stringify(p.functionCall.args ?? {}), 60)})` });
      else if (p?.inlineData) chips.push({ kind: /^image\//.test(p.inlineData.mimeType ?? '') ? 'image' : 'attachment', label: p.inlineData.displayName ?? p.inlineData.mimeType ?? 'inline data' });
      else if (p?.fileData) chips.push({ kind: 'attachment', label: p.fileData.fileUri ?? 'file' });
    }
    const shown = responses.length ? { ...m, parts: rest } : m;
    rows.push(row(i, m?.role === 'model' ? 'assistant' : 'user', shown, { chips, text: rest.filter((p) => typeof p?.text === 'string').map((p) => p.text).join('\n') }));
  });
  return rows;
}

/** rowsOf for 'openai-responses' and 'gemini'; null for the formats conversation.js describes. */
export function rowsOfMore(format, conv) {
  if (!Array.isArray(conv?.messages)) return null;
  if (format === 'openai-responses') return responsesRows(conv);
  if (format === 'gemini') return geminiRows(conv);
  return null;
}

/** The rows of the message list in any of the five formats. */
export function rowsFor(format, conv) {
  return rowsOfMore(format, conv) ?? rowsOf(format, conv);
}
