// The summarizers the page offers to guard.prepare():
//  - builtinSummarizer: deterministic, no network. It answers a SessionState built from the
//    request's messages (the user's questions, the tools that ran) after an artificial delay, so
//    that the heartbeats are visible.
//  - failingSummarizer / hangingSummarizer: an endpoint that is down (every call throws after a
//    short delay) or that never answers (only the timeout or an abort ends the call), so that the
//    fallback and the circuit breaker can be seen.
//  - endpointSummarizer: an OpenAI-compatible /chat/completions endpoint with a URL, key and
//    model the user typed. The key lives only in the closure; nothing is stored.

const QUESTION_CHARS = 200;

/** The plain text of a message's content (string, or text parts/blocks). */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (typeof p === 'string' ? p : p?.type === 'text' ? p.text ?? '' : ''))
    .filter(Boolean)
    .join('\n');
}

function oneLine(text, max = QUESTION_CHARS) {
  const line = text.replace(/<attachment[\s\S]*?<\/attachment>/g, '[attachment]').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Tool names called in the messages: OpenAI `tool_calls` and Anthropic `tool_use` blocks. */
function toolNames(messages) {
  const names = [];
  for (const m of messages) {
    for (const c of m?.tool_calls ?? []) if (c?.function?.name) names.push(c.function.name);
    if (Array.isArray(m?.content)) for (const b of m.content) if (b?.type === 'tool_use' && b.name) names.push(b.name);
  }
  return [...new Set(names)];
}

/** A SessionState from the summary source, deterministic for the same messages. */
export function sessionStateOf(messages) {
  const questions = messages
    .filter((m) => m?.role === 'user')
    .map((m) => oneLine(textOf(m.content)))
    .filter((q) => q && !/^\[attachment\]$/.test(q));
  const tools = toolNames(messages);
  const answers = messages.filter((m) => m?.role === 'assistant' && textOf(m.content).trim()).length;
  const results = messages.filter((m) => m?.role === 'tool' || (Array.isArray(m?.content) && m.content.some((b) => b?.type === 'tool_result'))).length;
  return {
    summary: `Earlier part of the conversation: ${messages.length} messages — ${questions.length} from the user, ${answers} assistant answers, ${results} tool results${tools.length ? ` (tools: ${tools.join(', ')})` : ''}.`,
    key_facts: [
      ...questions.map((q) => `The user asked: ${q}`),
      ...(tools.length ? [`Tools used: ${tools.join(', ')}`] : []),
    ],
    decisions: [],
    plan: null,
    open_questions: questions.slice(-3),
  };
}

function delay(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error('aborted'));
    }, { once: true });
  });
}

/** The built-in summarizer: `summarize(request)` for guard.prepare(), answering after `delayMs`. */
export function builtinSummarizer({ delayMs = 1500 } = {}) {
  return async ({ messages, signal }) => {
    await delay(delayMs, signal);
    return sessionStateOf(messages);
  };
}

/** A summarizer that is down: every call throws after `delayMs` (counts as `callback_error`). */
export function failingSummarizer({ delayMs = 200 } = {}) {
  return async ({ signal }) => {
    await delay(delayMs, signal);
    throw new Error('summarizer unavailable (the page\'s failing summarizer)');
  };
}

/** A summarizer that never answers: the call ends only when prepare's timeout (or an abort) aborts its signal. */
export function hangingSummarizer() {
  return ({ signal }) => delay(2 ** 31 - 1, signal);
}

/**
 * A summarizer calling an OpenAI-compatible chat completions endpoint.
 * Throws (and so counts as `callback_error`) on a network error or a non-2xx answer.
 */
export function endpointSummarizer({ url, apiKey, model }) {
  return async ({ messages, instructions, maxTokens, signal }) => {
    const headers = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const res = await fetch(url, {
      method: 'POST',
      signal,
      headers,
      body: JSON.stringify({
        model,
        max_tokens: maxTokens,
        messages: [{ role: 'system', content: instructions }, ...messages, { role: 'user', content: 'Summarize the conversation above.' }],
      }),
    });
    if (!res.ok) throw new Error(`summarizer HTTP ${res.status}`);
    const body = await res.json();
    return body?.choices?.[0]?.message?.content;
  };
}
