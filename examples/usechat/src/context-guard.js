// ctxguard for a useChat app: a guard in a Web Worker that prepares the UI messages before each
// send, the checkpoint kept in localStorage, and the metrics for the context meter.
// docs/usechat.md walks through this file.
import { createWorkerGuard } from 'ctxguard/worker';
import { CONTEXT_WINDOW, MODEL, RESERVED_OUTPUT_TOKENS, SYSTEM_PROMPT, TOOL_SCHEMAS } from '../shared/chat-config.js';

const STORE = 'ctxguard-example';

/** What a reload gives back: the chat's UI messages, the checkpoint, the last metrics. */
export function loadSaved() {
  try {
    return JSON.parse(localStorage.getItem(STORE) ?? 'null') ?? {};
  } catch {
    return {};
  }
}

function save(patch) {
  localStorage.setItem(STORE, JSON.stringify({ ...loadSaved(), ...patch }));
}

export function saveMessages(messages) {
  save({ messages });
}

export function clearSaved() {
  localStorage.removeItem(STORE);
}

/**
 * Start the worker and the guard; restore the saved checkpoint into it. `onMetrics` gets every
 * new `metrics` (after each prepare), `onStatus` what the guard did (for the page to show).
 */
export async function startGuard({ onMetrics, onStatus }) {
  const worker = new Worker(new URL('./guard.worker.js', import.meta.url), { type: 'module' });
  const guard = await createWorkerGuard(worker, {
    model: MODEL,
    format: 'ai-sdk-ui',
    contextWindow: CONTEXT_WINDOW,
    reservedOutputTokens: RESERVED_OUTPUT_TOKENS,
    // The server runs the tools (`stopWhen`): each step adds a call and its result to the request
    // prepared here; the reserve holds them (shared/chat-config.js, docs/usechat.md, "Tool steps
    // on the server"). Edits at the trigger: a summary early, so that the meter shows one.
    edits: 'trigger',
  });
  const saved = loadSaved();
  let restored = false;
  if (saved.checkpoint) restored = (await guard.restore(saved.checkpoint)).restored;
  onStatus({ restored, sends: 0, compactions: 0 });

  let sends = 0;
  let compactions = 0;
  /** The transport's `prepareSendMessagesRequest`: the body the server gets. */
  async function prepareSendMessagesRequest({ id, messages, body, trigger, messageId }) {
    const r = await guard.prepare(messages, {
      system: SYSTEM_PROMPT,
      tools: TOOL_SCHEMAS,
      // Runs here, on the page; the server asks the model for the summary.
      summarize: async ({ messages: older, system, instructions, maxTokens, signal }) => {
        const res = await fetch('/api/summarize', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messages: older, system, instructions, maxTokens }),
          signal,
        });
        if (!res.ok) throw new Error(`summarize: HTTP ${res.status}`);
        return (await res.json()).text;
      },
    });
    sends += 1;
    if (r.compaction?.status === 'completed') compactions += 1;
    if (r.checkpoint) save({ checkpoint: r.checkpoint });
    save({ metrics: r.metrics });
    onMetrics(r.metrics);
    onStatus({ restored, sends, compactions, sent: r.messages.length, droppedMessages: r.droppedMessages });
    // `messages`: UI messages (the app's own ids; compacted tool outputs in their parts);
    // `system`: system model messages for the server's `instructions`.
    return { body: { ...body, id, trigger, messageId, messages: r.messages, system: r.system } };
  }
  return { guard, prepareSendMessagesRequest, initialMetrics: saved.metrics ?? null };
}
