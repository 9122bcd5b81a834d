// Measurement code shared by Node and the browser page (no Node imports here).

export const now = () => performance.now();

/** A short text for first-count (cold start, memory) probes. */
export const SAMPLE = 'Hello! How many tokens does this short chat message take in the context window?';

/** The strings a chat client counts for one message: its text content, and each tool call's name and arguments. */
export function messageTexts(m) {
  const out = [];
  if (typeof m.content === 'string') out.push(m.content);
  else if (Array.isArray(m.content)) for (const p of m.content) if (p && p.type === 'text') out.push(p.text);
  if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) out.push(c.function.name, c.function.arguments);
  return out;
}

const encoder = new TextEncoder();
export const utf8Bytes = (s) => encoder.encode(s).length;

export function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * A measuring session for one counter over the inputs. `texts[id]` and `chats` are lists of
 * variants of each input (see inputs.mjs); the chat is counted per message, each message's strings
 * separately, the way a chat client counts.
 */
export function createSession(counter, { texts, chats }) {
  const work = {};
  for (const [id, variants] of Object.entries(texts)) work[id] = variants.map((text) => () => ({ count: counter.count(text), fingerprint: null }));
  if (chats) {
    work.chat = chats.map((chat) => {
      const strings = chat.flatMap(messageTexts);
      // Per-string counts folded into a fingerprint (cheap, in the same pass), so that equal totals
      // cannot hide per-message differences.
      return () => {
        let count = 0;
        let h = 0x811c9dc5;
        for (let i = 0; i < strings.length; i++) {
          const n = counter.count(strings[i]);
          count += n;
          h = Math.imul(h ^ n, 0x01000193) >>> 0;
        }
        return { count, fingerprint: h.toString(16).padStart(8, '0') };
      };
    });
  }
  return {
    variants: (id) => work[id].length,
    /** Counts variant `v` of input `id` once: `{ ms, count, fingerprint }`. */
    run(id, v) {
      const t0 = now();
      const r = work[id][v]();
      const ms = now() - t0;
      return { ms, ...r };
    },
  };
}

/** A message appended to the conversation for the incremental measurement (unique per `i`). */
export function followUp(i) {
  return {
    role: 'user',
    content: `Follow-up #${i}: the test in src/budget.rs still fails after the change; the log says the trigger limit is ` +
      `${1000 + i} tokens but the window is 128000. Can you check whether the reserved output is subtracted twice, ` +
      'and propose the smallest fix together with a regression test that reproduces it?',
  };
}

function tryCall(f) {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    return { ok: false, error: `${e && e.name}: ${e && e.code ? e.code + ': ' : ''}${e && e.message}` };
  }
}

export const MODEL_FOR = { o200k_base: 'gpt-4o', cl100k_base: 'gpt-4' };

/**
 * ctxguard's whole-conversation APIs, in a fresh process or page (so that its per-message cache is
 * cold): `kind` is 'guard' (`new ContextGuard().measure`, then again, then after one appended
 * message, several times) or 'countMessages' (then again). First the code is warmed up and the
 * vocabulary built by counting another conversation (`warm`) message by message with countTokens;
 * last, `baselineMs` is the time countTokens takes on the same conversation's strings, one by one —
 * "counting its text once". With `unseen` (another conversation, guard only), a new guard then
 * measures it with the code already warm (`unseenMs`), against countTokens on its strings
 * (`unseenBaselineMs`): what the first call costs when the engine has compiled the measure path
 * before. Returns `{ available: false }` when the export is missing.
 */
export function ctxguardChat(mod, kind, messages, warm, encoding, { runs, budgetMs, unseen = null }) {
  const model = MODEL_FOR[encoding];
  const out = { kind, model, available: false };
  const has = kind === 'guard' ? typeof mod.ContextGuard === 'function' : typeof mod.countMessages === 'function';
  if (!has) return out;
  out.available = true;
  const opts = { encoding };
  const countEach = (msgs) => {
    let n = 0;
    for (const m of msgs) for (const s of messageTexts(m)) n += mod.countTokens(s, opts);
    return n;
  };
  let t0 = now();
  countEach(warm);
  out.warmMs = now() - t0;
  if (kind === 'guard') {
    let g;
    const made = tryCall(() => (g = new mod.ContextGuard({ model })));
    if (!made.ok) return { ...out, error: made.error };
    t0 = now();
    const cold = tryCall(() => g.measure(messages));
    out.coldMs = now() - t0;
    if (!cold.ok) return { ...out, error: cold.error };
    out.usedTokens = cold.value.usedTokens;
    out.kindOfCount = cold.value.kind;
    t0 = now();
    g.measure(messages);
    out.againMs = now() - t0;
    const inc = [];
    let msgs = messages;
    const start = now();
    for (let i = 0; i < runs; i++) {
      msgs = msgs.concat([followUp(i)]);
      t0 = now();
      g.measure(msgs);
      inc.push(now() - t0);
      if (now() - start > budgetMs) break;
    }
    out.incrementalMs = inc;
    if (g.cacheStats) out.cacheStats = { ...g.cacheStats };
    if (typeof g.free === 'function') g.free();
    if (unseen) {
      const g2 = new mod.ContextGuard({ model });
      t0 = now();
      const r = tryCall(() => g2.measure(unseen));
      out.unseenMs = now() - t0;
      if (!r.ok) return { ...out, error: r.error };
      if (typeof g2.free === 'function') g2.free();
      t0 = now();
      countEach(unseen);
      out.unseenBaselineMs = now() - t0;
    }
  } else {
    t0 = now();
    const cold = tryCall(() => mod.countMessages(messages, { model }));
    out.coldMs = now() - t0;
    if (!cold.ok) return { ...out, error: cold.error };
    out.total = cold.value.total;
    out.exact = cold.value.exact;
    const again = [];
    const start = now();
    for (let i = 0; i < runs; i++) {
      t0 = now();
      mod.countMessages(messages, { model });
      again.push(now() - t0);
      if (now() - start > budgetMs) break;
    }
    out.againMs = again;
  }
  t0 = now();
  out.textTokens = countEach(messages);
  out.baselineMs = now() - t0;
  return out;
}
