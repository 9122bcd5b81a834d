// A mock model that speaks OpenAI's Chat Completions streaming format (server-sent events of
// `chat.completion.chunk` objects, then `data: [DONE]`), deterministic, on loopback. It keeps
// every request it receives so that a test can check what reached "the model".
//   - a request whose system text asks for a summary gets a summary;
//   - a request whose last message is a user message containing "search" gets a tool call of
//     `search` (the server runs the tool and calls again with its result);
//   - anything else gets a ~120-word answer, streamed a few words at a time.

const words = (s) => s.split(/(?<= )/);

function chunk(id, delta, finish = null, usage) {
  const c = { id, object: 'chat.completion.chunk', created: 1_730_000_000, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] };
  if (usage) c.usage = usage;
  return `data: ${JSON.stringify(c)}\n\n`;
}

function textOf(m) {
  if (typeof m?.content === 'string') return m.content;
  if (Array.isArray(m?.content)) return m.content.map((p) => p.text ?? '').join('');
  return '';
}

/** The reply to one request: `{ text }` or `{ call: { name, arguments } }`. */
export function reply(body, n) {
  const msgs = body.messages ?? [];
  const system = msgs.filter((m) => m.role === 'system').map(textOf).join('\n');
  const last = msgs.at(-1);
  if (/summar/i.test(system) && /summar/i.test(textOf(last))) {
    const users = msgs.filter((m) => m.role === 'user').length;
    return { text: `Summary of the earlier conversation: the user asked ${users} questions about the code base; the assistant searched it and answered each briefly. Reply ${n}.` };
  }
  if (last?.role === 'user' && /search/i.test(textOf(last))) {
    const q = textOf(last).replace(/.*search\s*/i, '').slice(0, 40) || 'TODO';
    return { call: { name: 'search', arguments: JSON.stringify({ q }) } };
  }
  if (last?.role === 'tool') {
    return { text: `I found ${textOf(last).length} characters of matches; the first ones are in src/lib.rs. (reply ${n})` };
  }
  const asked = textOf(last).slice(0, 60);
  const body120 = Array.from({ length: 12 }, (_, i) => `Point ${i + 1} about “${asked}” is explained here briefly.`).join(' ');
  return { text: `Reply ${n}: ${body120}` };
}

/** Handle POST /v1/chat/completions; `log` receives every request body. */
export async function handleCompletion(req, res, log) {
  const raw = await new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (s += d));
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
  const body = JSON.parse(raw);
  log.push(body);
  const id = `chatcmpl-${log.length}`;
  const r = reply(body, log.length);
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  if (!body.stream) {
    const message = r.call
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${log.length}`, type: 'function', function: r.call }] }
      : { role: 'assistant', content: r.text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: 1_730_000_000, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: r.call ? 'tool_calls' : 'stop' }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(chunk(id, { role: 'assistant', content: '' }));
  if (r.call) {
    res.write(chunk(id, { tool_calls: [{ index: 0, id: `call_${log.length}`, type: 'function', function: { name: r.call.name, arguments: '' } }] }));
    res.write(chunk(id, { tool_calls: [{ index: 0, function: { arguments: r.call.arguments } }] }));
    res.write(chunk(id, {}, 'tool_calls'));
  } else {
    const ws = words(r.text);
    for (let i = 0; i < ws.length; i += 6) {
      res.write(chunk(id, { content: ws.slice(i, i + 6).join('') }));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    res.write(chunk(id, {}, 'stop'));
  }
  if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_730_000_000, model: 'gpt-4o', choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}
