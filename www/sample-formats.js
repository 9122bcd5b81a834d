// The built-in sample (an OpenAI Chat Completions request) in the other wire formats ctxguard
// reads (docs/formats.md): the same conversation as an Anthropic Messages request, Vercel AI SDK
// model messages, OpenAI Responses input items and Gemini contents, so the format selector can be
// tried on it. Only what the sample uses is converted.

import { sample } from './sample.js';

/** The formats the sample converts to. */
export const SAMPLE_FORMATS = ['openai', 'anthropic', 'ai-sdk', 'openai-responses', 'gemini'];

/** The sample as `{ messages, tools, system? }` in `format` (one of SAMPLE_FORMATS). */
export function sampleIn(format) {
  if (format === 'anthropic') return toAnthropic(sample);
  if (format === 'ai-sdk') return toAiSdk(sample);
  if (format === 'openai-responses') return toResponses(sample);
  if (format === 'gemini') return toGemini(sample);
  return { messages: sample.messages, tools: sample.tools };
}

const dataUrl = (url) => /^data:([^;,]+);base64,(.*)$/s.exec(url);
/** JSON tool arguments as an object (the AI SDK and Anthropic carry them parsed). */
const parsed = (args) => {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
};
/** UTF-8 text as base64 (what an AI SDK file part carries). */
const base64Text = (text) => {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
};
/** The system messages' text, as one string. */
const systemText = (messages) => messages.filter((m) => m.role === 'system').map((m) => textOf(m.content)).join('\n\n');
const textOf = (content) => (typeof content === 'string' ? content : content.map((p) => p.text ?? '').join('\n'));
/** Consecutive `tool` messages become one message (both formats group a turn's tool results). */
function grouped(messages, convert) {
  const out = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (m.role === 'tool' && last?.tool) last.parts.push(m);
    else out.push(m.role === 'tool' ? { tool: true, parts: [m] } : m);
  }
  return out.map((m) => convert(m));
}

function toAiSdk({ messages, tools }) {
  const names = new Map(messages.flatMap((m) => m.tool_calls ?? []).map((c) => [c.id, c.function.name]));
  const part = (p) => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const d = dataUrl(p.image_url.url);
      return d ? { type: 'image', image: d[2], mediaType: d[1] } : { type: 'image', image: p.image_url.url };
    }
    if (p.type === 'file') return { type: 'file', data: base64Text(p.file.text), mediaType: 'text/plain', filename: p.file.filename };
    return p;
  };
  const convert = (m) => {
    if (m.tool) {
      return {
        role: 'tool',
        content: m.parts.map((t) => ({ type: 'tool-result', toolCallId: t.tool_call_id, toolName: names.get(t.tool_call_id), output: { type: 'text', value: t.content } })),
      };
    }
    if (m.role === 'assistant' && m.tool_calls) {
      const calls = m.tool_calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.function.name, input: parsed(c.function.arguments) }));
      return { role: 'assistant', content: [...(m.content ? [{ type: 'text', text: m.content }] : []), ...calls] };
    }
    return { role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(part) };
  };
  // The system prompt as `system` (AI SDK 7 rejects system messages in `messages` by default).
  return {
    system: systemText(messages),
    messages: grouped(messages.filter((m) => m.role !== 'system'), convert),
    tools: Object.fromEntries(tools.map(({ function: f }) => [f.name, { description: f.description, inputSchema: f.parameters }])),
  };
}

function toAnthropic({ messages, tools }) {
  const part = (p) => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const d = dataUrl(p.image_url.url);
      return d ? { type: 'image', source: { type: 'base64', media_type: d[1], data: d[2] } } : { type: 'image', source: { type: 'url', url: p.image_url.url } };
    }
    if (p.type === 'file') return { type: 'document', title: p.file.filename, source: { type: 'text', media_type: 'text/plain', data: p.file.text } };
    return p;
  };
  const convert = (m) => {
    if (m.tool) return { role: 'user', content: m.parts.map((t) => ({ type: 'tool_result', tool_use_id: t.tool_call_id, content: t.content })) };
    if (m.role === 'assistant' && m.tool_calls) {
      const uses = m.tool_calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.function.name, input: parsed(c.function.arguments) }));
      return { role: 'assistant', content: [...(m.content ? [{ type: 'text', text: m.content }] : []), ...uses] };
    }
    return { role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(part) };
  };
  return {
    system: systemText(messages),
    messages: grouped(messages.filter((m) => m.role !== 'system'), convert),
    tools: tools.map(({ function: f }) => ({ name: f.name, description: f.description, input_schema: f.parameters })),
  };
}

/** Responses `input` items: one item per message, each call and each output its own item; the system prompt as `instructions`. */
function toResponses({ messages, tools }) {
  const part = (p) => {
    if (p.type === 'text') return { type: 'input_text', text: p.text };
    if (p.type === 'image_url') return { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
    if (p.type === 'file') return { type: 'input_file', filename: p.file.filename, file_data: `data:text/plain;base64,${base64Text(p.file.text)}` };
    return p;
  };
  const items = messages.filter((m) => m.role !== 'system').flatMap((m) => {
    if (m.role === 'tool') return [{ type: 'function_call_output', call_id: m.tool_call_id, output: m.content }];
    if (m.role === 'assistant') {
      const text = m.content ? [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.content }] }] : [];
      return [...text, ...(m.tool_calls ?? []).map((c) => ({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments }))];
    }
    return [{ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(part) }];
  });
  return {
    system: systemText(messages),
    messages: items,
    tools: tools.map(({ function: f }) => ({ type: 'function', name: f.name, description: f.description, parameters: f.parameters, strict: false })),
  };
}

/** Gemini `contents`: `model` for the assistant, a turn's function responses in one user content; the system prompt as `systemInstruction`. */
function toGemini({ messages, tools }) {
  const names = new Map(messages.flatMap((m) => m.tool_calls ?? []).map((c) => [c.id, c.function.name]));
  const part = (p) => {
    if (p.type === 'text') return { text: p.text };
    if (p.type === 'image_url') {
      const d = dataUrl(p.image_url.url);
      return d ? { inlineData: { mimeType: d[1], data: d[2] } } : { fileData: { fileUri: p.image_url.url } };
    }
    if (p.type === 'file') return { inlineData: { mimeType: 'text/plain', data: base64Text(p.file.text), displayName: p.file.filename } };
    return p;
  };
  const convert = (m) => {
    if (m.tool) return { role: 'user', parts: m.parts.map((t) => ({ functionResponse: { id: t.tool_call_id, name: names.get(t.tool_call_id), response: { output: t.content } } })) };
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({ functionCall: { id: c.id, name: c.function.name, args: parsed(c.function.arguments) } }));
      return { role: 'model', parts: [...(m.content ? [{ text: m.content }] : []), ...calls] };
    }
    return { role: 'user', parts: typeof m.content === 'string' ? [{ text: m.content }] : m.content.map(part) };
  };
  return {
    system: { parts: [{ text: systemText(messages) }] },
    messages: grouped(messages.filter((m) => m.role !== 'system'), convert),
    tools: [{ functionDeclarations: tools.map(({ function: f }) => ({ name: f.name, description: f.description, parametersJsonSchema: f.parameters })) }],
  };
}
