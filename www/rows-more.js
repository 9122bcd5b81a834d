// The rows of the message list for the OpenAI Responses and Gemini formats (conversation.js's
// rowsOf describes the other three): one row per place of countMessages' `places` (docs/api.md),
// so the split of the messages and its order are ctxguard's, and perMessage[i] is row i's count.

import { rowsOf } from './conversation.js';
import { messageText } from './sources-view.js';

const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);
const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

function row(wireIndex, role, raw, { ref = null, chips = [], text = messageText(raw) } = {}) {
  const head = text.length > 2000 ? text.slice(0, 2000) : text;
  return { wireIndex, role, ref, preview: clip(oneLine(head), 220), lines: text === '' ? 0 : text.split('\n').length, chars: text.length, chips, raw };
}

/** Items whose row says what they are without a chip of their type. */
const PLAIN_ITEMS = new Set(['function_call', 'custom_tool_call', 'function_call_output', 'custom_tool_call_output', 'reasoning']);

function responsesRows({ messages, system }, places) {
  const names = new Map(messages.filter((m) => m?.call_id && m?.name).map((m) => [m.call_id, m.name]));
  return places.map((place) => {
    if (place.message === 'system') return row('system', 'system', { content: system });
    const i = place.message;
    const m = messages[i];
    const chips = [];
    for (const p of Array.isArray(m?.content) ? m.content : []) {
      if (p?.type === 'input_image') chips.push({ kind: 'image', label: `image${p.detail ? ` · ${p.detail}` : ''}` });
      else if (p?.type === 'input_file') chips.push({ kind: 'attachment', label: p.filename ?? 'file' });
    }
    if (m?.type === 'function_call' || m?.type === 'custom_tool_call') chips.push({ kind: 'tool', label: `${m.name}(${clip(m.arguments ?? m.input ?? '', 60)})` });
    else if (m?.type && !m.role && !PLAIN_ITEMS.has(m.type)) chips.push({ kind: 'other', label: m.type });
    const ref = m?.type?.endsWith('_output') && m.call_id ? `${names.get(m.call_id) ?? '?'} · ${m.call_id}` : null;
    return row(i, place.role, m, { ref, chips, text: m?.type === 'function_call' ? '' : messageText(m) });
  });
}

function geminiRows({ messages, system }, places) {
  return places.map((place) => {
    if (place.message === 'system') return row('system', 'system', typeof system === 'string' ? { content: system } : { parts: system.parts ?? [system].flat() });
    const i = place.message;
    const m = messages[i];
    const all = Array.isArray(m?.parts) ? m.parts : [];
    const parts = place.parts === null ? all : place.parts.map((k) => all[k]);
    if (place.role === 'tool' && place.parts !== null) {
      const p = parts[0];
      const r = p?.functionResponse ?? {};
      return row(i, 'tool', p, { ref: `${r.name ?? '?'}${r.id ? ` · ${r.id}` : ''}` });
    }
    const chips = [];
    for (const p of parts) {
      if (p?.functionCall) chips.push({ kind: 'tool', label: `${p.functionCall.name}(${clip(JSON.stringify(p.functionCall.args ?? {}), 60)})` });
      else if (p?.inlineData) chips.push({ kind: /^image\//.test(p.inlineData.mimeType ?? '') ? 'image' : 'attachment', label: p.inlineData.displayName ?? p.inlineData.mimeType ?? 'inline data' });
      else if (p?.fileData) chips.push({ kind: 'attachment', label: p.fileData.fileUri ?? 'file' });
    }
    const shown = place.parts === null ? m : { ...m, parts };
    return row(i, place.role, shown, { chips, text: parts.filter((p) => typeof p?.text === 'string').map((p) => p.text).join('\n') });
  });
}

/**
 * One place per message, for a conversation ctxguard could not count (so gave no places): its
 * rows are then shown without counts.
 */
const wholeMessages = (messages) => messages.map((m, i) => ({ message: i, parts: null, role: typeof m?.role === 'string' ? m.role : '?' }));

/**
 * The rows of the message list in any of the five formats: one per place of
 * `countMessages(conv.messages, { format, system: conv.system, places: true }).places`.
 */
export function rowsFor(format, conv, places) {
  if (!Array.isArray(conv?.messages)) return [];
  const at = places ?? wholeMessages(conv.messages);
  if (format === 'openai-responses') return responsesRows(conv, at);
  if (format === 'gemini') return geminiRows(conv, at);
  return rowsOf(format, conv, at);
}
