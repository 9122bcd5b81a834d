// The soak session shared by Node and the Chromium page (benches/soak.mjs, benches/soak.html):
// a chat client driving one ContextGuard through a long, growing conversation. No imports — the
// ctxguard module is passed in, so the same code runs in both runtimes.
//
// Each turn the client does what README's pipeline and checkpoint sections ask of it:
//   1. history = resolveHistory(stored turns) + the new user message;
//   2. prepare(history) before the model call; when it compacts, the checkpoint is stored as this
//      turn's chain right away;
//   3. (tool turns) the assistant's tool calls and their results are appended and prepare runs
//      again before the next model call;
//   4. the final reply is appended, observeUsage reports the provider's usage, measure feeds the
//      UI meter.
// Stored turns older than the previous checkpoint are archived (dropped from memory), as a client
// that keeps old turns in IndexedDB or on a server would: memory then follows the live
// conversation, which is what this benchmark checks.

/** Deterministic PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
  };
}

const WORDS = (
  'the build fails when the cache is cold and the worker restarts before the index is written so every ' +
  'request after that reads a stale manifest which points at a file that no longer exists we tried pinning ' +
  'the version clearing the lockfile and running the migration twice but the error comes back after about ' +
  'an hour under load memory grows slowly until the container is killed and the logs show a timeout in the ' +
  'connection pool config flag retry budget deadline shard replica leader election snapshot compaction'
).split(' ');

const QUESTIONS = [
  (r, i) => `Turn ${i}: why does ${r.pick(['the build', 'the deploy', 'the nightly job', 'the test suite'])} fail with "${r.pick(['ECONNRESET', 'out of memory', 'segfault', 'timeout after 30s'])}"? ${prose(r, r.int(10, 60))}`,
  (r, i) => `Kannst du mir erklären, warum der Dienst nach dem Neustart (Runde ${i}) wieder abstürzt? Die Größe des Caches wächst ständig, und ich weiß nicht, woran es liegt.`,
  (r, i) => `Pourquoi la réplique ${i % 7} est-elle en retard de plusieurs minutes ? Nous avons déjà augmenté la mémoire et redémarré le nœud principal, sans succès.`,
  (r, i) => `第${i}轮：为什么这个服务在高负载下会超时？我们已经把连接池调大了，但是问题还是存在。日志里有很多“连接被重置”的错误。`,
  (r, i) => `ターン${i}：ビルドが失敗する理由を教えてください。キャッシュを削除しても同じエラーが出ます。ログを添付します。`,
  (r, i) => `Почему тесты падают только на CI (шаг ${i})? Локально всё проходит, а в контейнере — таймаут при подключении к базе.`,
  (r, i) => `لماذا يفشل النشر في الخطوة ${i}؟ لقد جربنا إعادة التشغيل ولكن الخطأ ما زال موجودًا.`,
  (r, i) => `ok so step ${i} 🚀🔥 — it worked once then broke again 😩 can you check ${r.pick(['the config', 'the migration', 'my last diff'])}? ${prose(r, r.int(5, 30))}`,
];

function prose(r, n) {
  const out = [];
  for (let k = 0; k < n; k++) out.push(r.pick(WORDS));
  return `${out.join(' ')}.`;
}

function logLines(r, n, i) {
  const lines = [];
  for (let k = 0; k < n; k++) {
    const level = r.chance(0.05) ? 'ERROR' : r.chance(0.2) ? 'WARN' : 'INFO';
    lines.push(`2026-11-30T04:${String(k % 60).padStart(2, '0')}:${String((k * 7) % 60).padStart(2, '0')}.${String(k % 1000).padStart(3, '0')}Z ${level} [worker-${k % 8}] turn=${i} ${prose(r, r.int(4, 14))}`);
  }
  return lines.join('\n');
}

function jsonResult(r, i) {
  const hits = [];
  for (let k = 0; k < r.int(3, 25); k++) {
    hits.push({ id: `doc-${i}-${k}`, title: prose(r, r.int(3, 8)), score: Math.round(r.next() * 1000) / 1000, snippet: prose(r, r.int(10, 40)), tags: [r.pick(WORDS), r.pick(WORDS)] });
  }
  return JSON.stringify({ query: prose(r, 4), total: hits.length * 17, hits });
}

function code(r, n) {
  const lines = [];
  for (let k = 0; k < n; k++) lines.push(`${'  '.repeat(k % 4)}const ${r.pick(WORDS)}_${k} = await ${r.pick(WORDS)}(${r.pick(WORDS)}, { retries: ${k % 5} });`);
  return lines.join('\n');
}

function base64(bytes) {
  let s = '';
  for (let k = 0; k < bytes.length; k += 0x8000) s += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(s);
}

/** A data URL of a PNG-looking payload: a real signature and IHDR (so the size is read), random bytes after it. */
function pngDataUrl(r, width, height, bytes) {
  const b = new Uint8Array(bytes);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(b.buffer).setUint32(16, width);
  new DataView(b.buffer).setUint32(20, height);
  b.set([8, 6, 0, 0, 0], 24);
  for (let k = 29; k < bytes; k++) b[k] = (r.next() * 256) | 0;
  return `data:image/png;base64,${base64(b)}`;
}

/** The user message of turn i: text, sometimes a pasted attachment, a file part or an image. */
export function userMessage(r, i) {
  const text = r.pick(QUESTIONS)(r, i);
  if (i % 41 === 17) {
    return { role: 'user', content: `${text}\n<attachment name="server-${i}.log" type="text/plain">\n${logLines(r, r.int(600, 1200), i)}\n</attachment>` };
  }
  if (i % 53 === 29) {
    return { role: 'user', content: [{ type: 'text', text }, { type: 'file', file: { filename: `report-${i}.pdf`, text: prose(r, r.int(3000, 6000)) } }] };
  }
  if (i % 23 === 11) {
    const url = pngDataUrl(r, r.pick([800, 1280, 1920]), r.pick([600, 720, 1080]), r.int(20_000, 60_000));
    return { role: 'user', content: [{ type: 'text', text: `Here is a screenshot (turn ${i}). ${text}` }, { type: 'image_url', image_url: { url, detail: 'auto' } }] };
  }
  return { role: 'user', content: text };
}

/** The assistant's tool calls of turn i (or none) and their results. */
export function toolRound(r, i) {
  if (!r.chance(0.55)) return [];
  const calls = [];
  const results = [];
  for (let k = 0; k < r.int(1, 3); k++) {
    const id = `call_${i}_${k}`;
    const kind = r.pick(['run_tests', 'search_docs', 'read_file', 'run_tests']);
    const args = kind === 'run_tests' ? { target: r.pick(WORDS), verbose: r.chance(0.3) } : kind === 'search_docs' ? { query: prose(r, 5) } : { path: `src/${r.pick(WORDS)}/${r.pick(WORDS)}.ts` };
    calls.push({ id, type: 'function', function: { name: kind, arguments: JSON.stringify(args) } });
    const long = r.chance(0.08);
    const content = kind === 'run_tests' ? logLines(r, long ? r.int(1500, 3000) : r.int(10, 120), i) : kind === 'search_docs' ? jsonResult(r, i) : code(r, r.int(20, 200));
    results.push({ role: 'tool', tool_call_id: id, content });
  }
  return [{ role: 'assistant', content: r.chance(0.3) ? `Let me check (${i}).` : null, tool_calls: calls }, ...results];
}

/** The final assistant reply of turn i. */
export function reply(r, i) {
  const parts = [`Here is what I found for turn ${i}. ${prose(r, r.int(20, 120))}`];
  if (r.chance(0.3)) parts.push(`\`\`\`ts\n${code(r, r.int(5, 30))}\n\`\`\``);
  if (r.chance(0.2)) parts.push('Zusammenfassung: 缓存 est invalide — 再起動してください。');
  return { role: 'assistant', content: parts.join('\n\n') };
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p?.type === 'text' ? p.text ?? '' : '')).join(' ');
}

/**
 * A deterministic summarizer: a SessionState from the user's questions and the tools that ran,
 * kept under `maxTokens` with the package's own counter. Answers at once.
 */
export function summarizer(countTokens) {
  return async ({ messages, maxTokens }) => {
    const questions = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content).replace(/<attachment[\s\S]*?<\/attachment>/g, '[attachment]').replace(/\s+/g, ' ').slice(0, 160));
    const tools = [...new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name)))];
    const state = {
      summary: `Earlier: ${messages.length} messages, ${questions.length} questions, tools ${tools.join(', ') || 'none'}.`,
      key_facts: [],
      decisions: ['Keep the cache warm before restarting workers.'],
      plan: { status: 'active', steps: [{ description: 'find the failing step', status: 'in_progress' }] },
      open_questions: [],
    };
    const cap = Math.floor(maxTokens * 0.6);
    for (const q of questions.slice(-40)) {
      state.key_facts.push(`The user asked: ${q}`);
      if (countTokens(JSON.stringify(state)) > cap) {
        state.key_facts.pop();
        break;
      }
    }
    return state;
  };
}

export const SYSTEM = { role: 'system', content: 'You are a senior SRE assistant. Answer concisely; use tools for live data.' };

/**
 * One long session. `cg` is the ctxguard module. `config` the guard's config. Call `run(n)` to
 * advance n turns; `stats()` describes where it is. `archive: false` keeps every stored turn in
 * memory (the control run: the heap must then be seen growing).
 */
export function createSession(cg, { config, seed = 8, key = 'soak-secret', archive = true }) {
  const r = rng(seed);
  const guard = new cg.ContextGuard({ ...config, checkpointKey: key });
  const summarize = summarizer(cg.countTokens);
  let turns = [];
  let turn = 0;
  let lastCheckpointTurn = -1;
  const totals = { prepares: 0, compactions: 0, degraded: 0, emergencyDrops: 0, maxUsed: 0, prepareMs: 0, compactionTurns: [] };
  let lastMetrics = null;

  async function prepareAndStore(history, current) {
    const t0 = performance.now();
    const res = await guard.prepare(history, { summarize });
    totals.prepareMs += performance.now() - t0;
    totals.prepares += 1;
    if (res.metrics.usedTokens > res.metrics.usableLimit) throw new Error(`turn ${turn}: ${res.metrics.usedTokens} tokens over the usable limit ${res.metrics.usableLimit}`);
    totals.maxUsed = Math.max(totals.maxUsed, res.metrics.usedTokens);
    totals.emergencyDrops += res.droppedMessages;
    if (res.degraded) totals.degraded += 1;
    if (res.checkpoint) {
      totals.compactions += 1;
      totals.compactionTurns.push(turn);
      // Persist the checkpoint as this turn's chain the moment prepare returns.
      current.messages = res.checkpoint.messages;
      // Archive what the previous checkpoint no longer needs: keep turns from it on.
      const prev = turns.findIndex((t) => t.id === `t${lastCheckpointTurn}`);
      if (archive && prev > 0) turns = turns.slice(prev);
      lastCheckpointTurn = turn;
    }
    return res;
  }

  async function step() {
    const question = userMessage(r, turn);
    const resolved = cg.resolveHistory(turns, { checkpointKey: key });
    if (lastCheckpointTurn >= 0 && !resolved.fromCheckpoint) throw new Error(`turn ${turn}: resolveHistory lost the checkpoint`);
    const history = [...(turns.length ? resolved.messages : [SYSTEM]), question];
    const current = { id: `t${turn}`, messages: turns.length ? [question] : [SYSTEM, question] };
    turns.push(current);
    let res = await prepareAndStore(history, current);
    const round = toolRound(r, turn);
    if (round.length) {
      current.messages = [...current.messages, ...round];
      const again = res.checkpoint ? res.checkpoint.messages : history;
      res = await prepareAndStore([...again, ...round], current);
    }
    const answer = reply(r, turn);
    current.messages = [...current.messages, answer];
    const jitter = 1 + (r.next() - 0.5) * 0.02;
    guard.observeUsage({ messages: res.messages, usage: { prompt_tokens: Math.round(res.metrics.usedTokens * jitter), prompt_tokens_details: { cached_tokens: 0 } } });
    lastMetrics = guard.measure([...res.messages, answer]);
    turn += 1;
  }

  return {
    async run(n) {
      for (let k = 0; k < n; k++) await step();
      return this.stats();
    },
    stats() {
      let chars = 0;
      for (const t of turns) chars += JSON.stringify(t.messages).length;
      return {
        turn,
        storedTurns: turns.length,
        storedChars: chars,
        usedTokens: lastMetrics?.usedTokens ?? 0,
        cacheEntries: guard.cacheStats.entries,
        ...totals,
        compactionTurns: [...totals.compactionTurns],
      };
    },
    free() {
      guard.free();
    },
  };
}
