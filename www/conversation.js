// Reading a pasted or loaded conversation, and describing its messages for the raw view.

/** An error the page itself raises (ctxguard's own errors carry `name === 'CtxguardError'`). */
export class PageError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'PageError';
    this.code = code;
  }
}

/**
 * Parse the editor text into `{ messages, tools, system, model }`.
 * Accepted: a messages array, or a request body `{ messages, tools?, system?, model? }`
 * (OpenAI Chat Completions, Anthropic Messages or Vercel AI SDK model messages, whose `tools` are
 * an object by name). The messages themselves are checked by
 * ctxguard, not here, so its error codes reach the page unchanged.
 */
export function parseConversation(text) {
  if (text.trim() === '') throw new PageError('EMPTY_INPUT', 'Paste a conversation (a JSON array of messages or a request body), or load a file.');
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PageError('INVALID_JSON', `The conversation is not valid JSON: ${e.message}`);
  }
  if (Array.isArray(value)) return { messages: value, tools: undefined, system: undefined, model: undefined };
  if (value && typeof value === 'object' && 'messages' in value) {
    const { messages, tools, system, model } = value;
    return { messages, tools: tools ?? undefined, system: system ?? undefined, model: typeof model === 'string' ? model : undefined };
  }
  throw new PageError('UNRECOGNIZED_SHAPE', 'Expected a JSON array of messages, or an object with a "messages" array (and optional "tools", "system", "model").');
}

const refOf = (id, names) => (id === undefined || id === null ? null : names.get(id) ? `${names.get(id)} · ${id}` : String(id));
const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);
const oneLine = (s) => s.replace(/\s+/g, ' ').trim();
/** The preview line of a text: only its head is read (a tool output can be megabytes). */
const previewOf = (text, n) => clip(oneLine(text.length > n * 8 ? text.slice(0, n * 8) : text), n);

/** Lines of a text, counted without splitting it. */
function lineCount(text) {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function imageSize(url) {
  // Read the pixel size from a PNG data URL header (enough for the chip); other images show no size.
  const m = /^data:image\/png;base64,(.{32})/.exec(url ?? '');
  if (!m) return '';
  try {
    const b = atob(m[1]);
    const u32 = (o) => ((b.charCodeAt(o) << 24) | (b.charCodeAt(o + 1) << 16) | (b.charCodeAt(o + 2) << 8) | b.charCodeAt(o + 3)) >>> 0;
    return ` ${u32(16)}×${u32(20)}`;
  } catch {
    return '';
  }
}

/** One row of the raw view: what the message is, in a line, and the chips for its parts. */
function describeParts(content) {
  const texts = [];
  const chips = [];
  if (typeof content === 'string') texts.push(content);
  for (const p of Array.isArray(content) ? content : []) {
    if (typeof p === 'string') texts.push(p);
    else if (p?.type === 'text') texts.push(p.text ?? '');
    else if (p?.type === 'image_url') chips.push({ kind: 'image', label: `image${imageSize(p.image_url?.url)}${p.image_url?.detail ? ` · ${p.image_url.detail}` : ''}` });
    else if (p?.type === 'image' && typeof p.image === 'string') chips.push({ kind: 'image', label: `image${imageSize(p.image.startsWith('data:') ? p.image : `data:${p.mediaType};base64,${p.image}`)}` });
    else if (p?.type === 'image') chips.push({ kind: 'image', label: `image${p.source?.type === 'base64' ? imageSize(`data:${p.source.media_type};base64,${p.source.data}`) : ''}` });
    else if (p?.type === 'file') chips.push({ kind: 'attachment', label: p.file?.filename ?? p.filename ?? p.mediaType ?? 'file' });
    else if (p?.type === 'tool-call') chips.push({ kind: 'tool', label: `${p.toolName}(${clip(JSON.stringify(p.input ?? p.args ?? {}), 60)})` });
    else if (p?.type === 'document') chips.push({ kind: 'attachment', label: p.title ?? p.source?.media_type ?? 'document' });
    else if (p?.type === 'input_audio') chips.push({ kind: 'other', label: 'audio' });
    else if (p?.type === 'tool_use') chips.push({ kind: 'tool', label: `${p.name}(${clip(JSON.stringify(p.input ?? {}), 60)})` });
    else if (p?.type) chips.push({ kind: 'other', label: p.type });
  }
  const text = texts.join('\n');
  for (const m of text.matchAll(/<attachment\s+name="([^"]*)"/g)) chips.push({ kind: 'attachment', label: m[1] });
  return { text, chips };
}

/** Tool call id -> tool name, from OpenAI `tool_calls`, Anthropic `tool_use` and AI SDK `tool-call` parts. */
function toolNames(messages) {
  const names = new Map();
  for (const m of messages) {
    for (const c of m?.tool_calls ?? []) names.set(c?.id, c?.function?.name);
    for (const b of Array.isArray(m?.content) ? m.content : []) {
      if (b?.type === 'tool_use') names.set(b.id, b.name);
      else if (b?.type === 'tool-call') names.set(b.toolCallId, b.toolName);
    }
  }
  return names;
}

function describe(m, wireIndex, role = m?.role, names = new Map()) {
  const { text, chips } = describeParts(m?.content);
  for (const c of m?.tool_calls ?? []) chips.push({ kind: 'tool', label: `${c.function?.name}(${clip(c.function?.arguments ?? '', 60)})` });
  if (m?.function_call) chips.push({ kind: 'tool', label: `${m.function_call.name}(${clip(m.function_call.arguments ?? '', 60)})` });
  return {
    wireIndex,
    role: role ?? '?',
    ref: refOf(m?.tool_call_id ?? m?.tool_use_id ?? m?.toolCallId, names),
    preview: previewOf(text, 220),
    lines: lineCount(text),
    chars: text.length,
    chips,
    raw: m,
  };
}

/**
 * AI SDK: the guard gives every system message back in `system` (after those of the `system`
 * option), not in `messages`. `inPlace` puts them back where they were among the raw messages,
 * so that the model-visible list lines up with the raw one message for message: returns
 * `{ messages, system }` with `system` the option's part. `optionSystem` is the `system` option
 * that was passed (undefined when none).
 */
export function aiSdkInPlace(rawMessages, optionSystem, visibleMessages, visibleSystem) {
  const systems = [visibleSystem ?? []].flat();
  const leading = optionSystem === undefined || optionSystem === null ? 0 : [optionSystem].flat().length;
  const inMessages = systems.slice(leading);
  const others = [...visibleMessages];
  const messages = [];
  for (const m of rawMessages) {
    const next = m?.role === 'system' ? inMessages.shift() : others.shift();
    if (next === undefined) return null;
    messages.push(next);
  }
  if (inMessages.length || others.length) return null;
  return { messages, system: leading ? systems.slice(0, leading) : undefined };
}

/** The text a tool result carries: an AI SDK `output` (text, JSON or content parts). */
function outputText(output) {
  if (typeof output === 'string') return output;
  if (typeof output?.value === 'string') return output.value;
  if (output?.type === 'content' && Array.isArray(output.value)) return output.value.map((p) => p?.text ?? '').join('\n');
  if (output?.type === 'execution-denied') return output.reason ?? 'Tool execution denied.';
  return JSON.stringify(output?.value ?? output ?? null);
}

/**
 * A system row: Anthropic's and OpenAI's `system` option is one; the AI SDK's one per system
 * message (`place.parts: [k]` when the option is an array; a string as the system message the
 * guard gives back for it, so that an unchanged one compares equal to the model-visible view's).
 */
function systemRow(format, system, place) {
  if (format !== 'ai-sdk') return describe({ content: system }, 'system', 'system');
  const s = place.parts ? system?.[place.parts[0]] : system;
  return describe(typeof s === 'string' ? { role: 'system', content: s } : s, 'system', 'system');
}

/**
 * The rows of the raw view for OpenAI, Anthropic and AI SDK messages: one per place of
 * `countMessages(..., { places: true })` — ctxguard's split of the messages, in its order — so
 * that `perMessage[i]` belongs to row i. A place that is a whole message is described as it is;
 * a split-off tool result (an Anthropic `tool_result` block, an AI SDK tool-message part) by its
 * part; the rest of a split message by the parts the place lists.
 */
export function rowsOf(format, { messages, system }, places) {
  if (!Array.isArray(messages)) return [];
  const names = toolNames(messages);
  return places.map((place) => {
    if (place.message === 'system') return systemRow(format, system, place);
    const i = place.message;
    const m = messages[i];
    if (place.parts === null) return describe(m, i, place.role, names);
    const parts = place.parts.map((k) => m?.content?.[k]);
    const p = parts[0];
    if (place.role === 'tool' && format === 'ai-sdk') {
      // The row's text is the output's; its raw JSON (shown, and compared with the model-visible
      // view's) the part itself.
      // The call ctxguard pairs it with (an approval response's: the call its approval was for).
      const toolCallId = place.callId;
      return { ...describe({ content: p?.type === 'tool-result' ? outputText(p.output ?? p.result) : '', toolCallId }, i, 'tool', names), raw: p };
    }
    if (place.role === 'tool') return describe({ content: p?.content, tool_use_id: p?.tool_use_id }, i, 'tool', names);
    return describe({ ...m, content: parts }, i, place.role, names);
  });
}
