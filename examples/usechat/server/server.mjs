// The example's server, all on loopback in one Node process:
//   /                 the built app (dist/, `npm run build`)
//   POST /api/chat    useChat's endpoint: the prepared UI messages → streamText → a UI message stream
//   POST /api/summarize  ctxguard's summarizer, asked by the page through the guard
//   /mock/v1/...      the mock model (OpenAI Chat Completions, streaming), server/mock-model.mjs
//   GET /mock/requests  what the mock model received (for the tests)
// PORT (default 5179) picks the port; 0 picks a free one.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { convertToModelMessages, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MODEL, SYSTEM_PROMPT, TOOL_SCHEMAS } from '../shared/chat-config.js';
import { handleCompletion } from './mock-model.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, '..', 'dist');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json' };

/** The search tool's result: long, as real tool output is (ctxguard compacts it in later turns). */
function search({ q }) {
  return { q, matches: Array.from({ length: 80 }, (_, i) => ({ file: `src/mod${i % 9}/file${i}.rs`, line: (i * 37) % 500, text: `// ${q}: case ${i} is not handled yet` })) };
}

async function readJson(req) {
  let s = '';
  req.setEncoding('utf8');
  for await (const d of req) s += d;
  return JSON.parse(s);
}

export async function startServer({ port = Number(process.env.PORT ?? 5179), quiet = false } = {}) {
  const received = [];
  let base = '';
  const openai = () => createOpenAI({ baseURL: `${base}/mock/v1`, apiKey: 'mock' });
  const tools = Object.fromEntries(
    Object.entries(TOOL_SCHEMAS).map(([name, t]) => [name, tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: search })]),
  );

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    try {
      if (req.method === 'POST' && url.pathname === '/mock/v1/chat/completions') return await handleCompletion(req, res, received);
      if (url.pathname === '/mock/requests') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(received));
      }
      if (req.method === 'POST' && url.pathname === '/api/chat') {
        const { messages, system } = await readJson(req);
        // The page sends ctxguard's `system`: this prompt first, then ctxguard's notes (a
        // summary). Take notes from the page only behind the server's own prompt.
        if (!Array.isArray(system) || system[0]?.content !== SYSTEM_PROMPT) {
          res.writeHead(400, { 'content-type': 'text/plain' });
          return res.end('system must start with the server prompt\n');
        }
        const result = streamText({
          model: openai().chat(MODEL),
          instructions: system,
          messages: await convertToModelMessages(messages),
          tools,
          stopWhen: stepCountIs(3),
        });
        return result.pipeUIMessageStreamToResponse(res);
      }
      if (req.method === 'POST' && url.pathname === '/api/summarize') {
        const { messages, system, instructions, maxTokens } = await readJson(req);
        const { text } = await generateText({
          model: openai().chat(MODEL),
          instructions: [{ role: 'system', content: instructions }, ...(system ?? [])],
          messages: [...(await convertToModelMessages(messages)), { role: 'user', content: 'Summarize the conversation above.' }],
          maxOutputTokens: maxTokens,
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ text }));
      }
      // The built app.
      const path = decodeURIComponent(url.pathname);
      let file = resolve(dist, `.${sep}${path}`);
      if (!file.startsWith(dist)) throw Object.assign(new Error('outside'), { status: 404 });
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      if (!(await stat(file).catch(() => null))) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found (run `npm run build` first)\n');
      }
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      createReadStream(file).pipe(res);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${e?.stack ?? e}\n`);
      if (!quiet) console.error(e);
    }
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  if (!quiet) console.log(`useChat example on ${base}/ (mock model at ${base}/mock/v1)`);
  return { server, url: base, received, close: () => new Promise((r) => server.close(r)) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) startServer();
