// The page's Web Worker: ctxguard runs here (ctxguard/worker/serve), next to a few methods of the
// page's own, so that the main thread only renders — even on a 2,000-message conversation. The
// summarizer of prepare() still runs on the main thread (ctxguard/worker forwards it).
// Import maps do not reach workers: the package is imported by URL.

import { serveGuard } from '/pkg/worker-serve.js';
import { aiSdkInPlace, parseConversation } from './conversation.js';

const now = () => performance.now();

/**
 * The format ctxguard recognizes in a parsed conversation `{ messages, tools, system }`
 * (`detectFormat` on it as a request), or null — also when it cannot be read: the pass that
 * follows reports why.
 */
function formatOf(api, { messages, tools, system }) {
  try {
    return api.detectFormat({ messages, ...(tools === undefined ? {} : { tools }), ...(system === undefined ? {} : { system }) });
  } catch {
    return null;
  }
}

/** `[id, offset]` of each preview in a listAttachments() result: where its footer says to read on. */
const previewOffsets = (listed) => listed.filter((a) => a.offset !== null).map((a) => [a.id, a.offset]);

serveGuard({
  methods: {
    /** The model's facts and the budgets that blank limit fields resolve to (greyed placeholders). */
    facts({ model }, { api }) {
      const info = api.modelInfo(model);
      const budget = (cfg) => {
        try {
          const g = new api.ContextGuard(cfg);
          const b = g.budget;
          g.free();
          return b;
        } catch {
          return null;
        }
      };
      const known = budget({ model: info.model });
      return { info, known, ratios: known ?? budget({ model: info.model, contextWindow: 1_000_000 }) };
    },

    /**
     * A loaded file (or a long text) read and parsed here; the page gets the parsed conversation
     * and the format ctxguard recognizes in it (`detectFormat`, null when none).
     */
    async parse({ file, text }, { api, progress }) {
      progress({ step: 'read', label: `Reading ${file?.name ?? 'the text'}` });
      const source = file ? await file.text() : text;
      progress({ step: 'parse', label: `Parsing ${(source.length / 1e6).toFixed(1)} MB of JSON` });
      const conv = parseConversation(source);
      return { conv, chars: source.length, format: formatOf(api, conv) };
    },

    /** The format ctxguard recognizes in a parsed conversation (`detectFormat`), or null. */
    detect({ conv }, { api }) {
      return formatOf(api, conv);
    },

    /**
     * What the provider reported for the request the page would send (the model-visible
     * messages): `observeUsage` on the guard, and its calibration state to keep for later guards.
     */
    observe(arg, { messages, guard }) {
      const g = guard(arg.guard);
      const opts = {};
      if (arg.tools !== undefined) opts.tools = arg.tools;
      if (arg.system !== undefined) opts.system = arg.system;
      const sent = g.guardSources(messages, { ...opts, emergency: arg.emergency });
      const system = sent.system ?? arg.system;
      const summary = g.observeUsage({ messages: sent.messages, tools: arg.tools, ...(system === undefined ? {} : { system }), usage: { input_tokens: arg.reported } });
      return { summary, calibration: g.calibration };
    },

    /**
     * One pass of the page on the conversation (`messages`): the raw metrics, the source guards,
     * per-message counts of both views. Only the model-visible messages that differ from the raw
     * ones travel back (the page already has the others), plus the attachments and the offsets
     * their previews suggest.
     */
    pass(arg, { api, messages, guard, progress }) {
      const g = guard(arg.guard);
      const opts = {};
      if (arg.tools !== undefined) opts.tools = arg.tools;
      if (arg.system !== undefined) opts.system = arg.system;
      const steps = 4;
      progress({ step: 'measure', done: 0, of: steps, label: 'Counting the raw request' });
      const t0 = now();
      const raw = g.measure(messages, opts);
      progress({ step: 'guard', done: 1, of: steps, label: 'Running the source guards' });
      const t1 = now();
      let delivered = 0;
      const result = g.guardSources(messages, { ...opts, emergency: arg.emergency, onTrace: () => delivered++ });
      const t2 = now();
      progress({ step: 'count', done: 2, of: steps, label: 'Counting every message' });
      // `places`: where each counted message sits, so the page's rows are ctxguard's split of them.
      const counts = api.countMessages(messages, { model: arg.model, format: arg.format, places: true, ...opts });
      // Anthropic's system and the AI SDK's system messages come back from the guard; OpenAI's is
      // unchanged. The AI SDK's system messages go back in place, so both views line up.
      const placed = arg.format === 'ai-sdk' ? aiSdkInPlace(messages, arg.system, result.messages, result.system) : null;
      const list = placed?.messages ?? result.messages;
      const system = placed ? placed.system : arg.format === 'openai' ? arg.system : result.system ?? undefined;
      const vcounts = api.countMessages(list, { model: arg.model, format: arg.format, places: true, ...opts, ...(system === undefined ? {} : { system }) });
      progress({ step: 'compare', done: 3, of: steps, label: 'Comparing raw and model-visible' });
      const aligned = list.length === messages.length;
      const changed = {};
      if (aligned) {
        list.forEach((m, i) => {
          if (JSON.stringify(m) !== JSON.stringify(messages[i])) changed[i] = m;
        });
      }
      return {
        raw,
        sourceLimits: g.sourceLimits,
        metrics: result.metrics,
        traces: result.traces,
        system: placed ? placed.system ?? null : result.system,
        delivered,
        counts,
        vcounts,
        changed,
        visible: aligned ? null : list,
        attachments: api.listAttachments(messages, { format: arg.format, model: arg.model, ...(arg.system === undefined ? {} : { system: arg.system }) }),
        previews: previewOffsets(api.listAttachments(list, { format: arg.format, model: arg.model, ...(system === undefined ? {} : { system }) })),
        ms: { measure: t1 - t0, guard: t2 - t1 },
      };
    },

    /**
     * The stored-turns file of a compaction: the earlier turn (`messages`, which the worker
     * already has) and the checkpoint, as the JSON text to download and keep.
     */
    turnsFile({ head, checkpoint, system }, { messages }) {
      const turns = [
        ...(messages.length ? [{ id: 'turn-1', status: 'completed', messages, ...(system !== undefined ? { system } : {}) }] : []),
        { id: `turn-${messages.length ? 2 : 1}`, status: 'completed', messages: checkpoint.messages, ...(checkpoint.system != null ? { system: checkpoint.system } : {}) },
      ];
      return { json: JSON.stringify({ ...head, turns }, null, 2), turns: turns.length };
    },

    /** Reloads a stored-turns file: parse, resolveHistory, and the metrics of what resumes. */
    async reload({ file, text, config, format: fallbackFormat, model: fallbackModel }, { api }) {
      const data = JSON.parse(file ? await file.text() : text);
      const turns = Array.isArray(data) ? data : data?.turns;
      if (!Array.isArray(turns)) throw new Error('Expected { turns: [...] } or an array of turns.');
      const format = data?.format ?? fallbackFormat;
      const model = data?.model ?? fallbackModel;
      const resolved = api.resolveHistory(turns, { format });
      const guard = new api.ContextGuard({ ...config, model, format });
      try {
        const opts = format !== 'openai' && resolved.system != null ? { system: resolved.system } : {};
        // OpenAI and Anthropic tools are an array, the AI SDK's an object by name.
        const tools = data?.tools !== null && typeof data?.tools === 'object' ? data.tools : undefined;
        if (tools !== undefined) opts.tools = tools;
        return {
          resolved,
          metrics: guard.measure(resolved.messages, opts),
          storedCount: turns.reduce((n, t) => n + (Array.isArray(t?.messages) ? t.messages.length : 0), 0),
          turns: turns.length,
          format,
          model,
          tools,
        };
      } finally {
        guard.free();
      }
    },
  },
});
