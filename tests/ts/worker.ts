// Uses ctxguard/worker and ctxguard/worker/serve with the declared types (tsc --noEmit -p tests/ts/).
import type { AnthropicTextBlock, PrepareResult, ProgressEvent, WireMessage } from 'ctxguard';
import { WorkerConnection, connectGuardWorker, createWorkerGuard, type TransferStats, type WorkerGuard } from 'ctxguard/worker';
import { serveGuard, type MethodContext } from 'ctxguard/worker/serve';
import { serveGuard as serveO200k } from 'ctxguard/o200k/worker/serve';
import { serveGuard as serveCl100k } from 'ctxguard/cl100k/worker/serve';
// The per-encoding serve entries have the same types.
const servers: (typeof serveGuard)[] = [serveO200k, serveCl100k];
void servers;

declare const worker: Worker;

export async function mainThread(messages: WireMessage[]): Promise<PrepareResult> {
  const guard: WorkerGuard = await createWorkerGuard(worker, { model: 'gpt-4o' });
  const usable: number = guard.budget.usableLimit;
  const m = await guard.measure(messages, { tools: [] });
  const state: 'ok' | 'near_trigger' | 'over_trigger' | 'over_limit' = m.state;
  const g = await guard.guardSources(messages, { onTrace: (t) => t.operation });
  const visible: WireMessage[] = g.messages;
  const controller = new AbortController();
  const result = await guard.prepare(messages, {
    summarize: async ({ messages: source, signal }) => (signal.aborted ? '' : `${source.length} messages`),
    onProgress: (e: ProgressEvent) => e.elapsedMs,
    signal: controller.signal,
    timeoutMs: 30_000,
  });
  const settled = await guard.settle(messages, { summarize: async () => ({ summary: 's' }) });
  const rendered: string = settled.rendered;
  const w: WorkerConnection = await connectGuardWorker(new URL('./guard.worker.js', 'https://example.invalid/'), { readyTimeoutMs: 5000 });
  const same: boolean = guard.worker instanceof WorkerConnection;
  const n: number = await w.countTokens('hello', { encoding: 'cl100k_base' });
  const total: number = (await w.countMessages(messages, { model: 'gpt-4o' })).total;
  const custom = await w.call<{ rows: number }>('rows', { from: 0 }, { messages, onProgress: (e) => e });
  const rows: number = custom.rows;
  const stats: TransferStats = w.transferStats;
  const sent: number = stats.messagesSent;
  // @ts-expect-error measure is asynchronous in a worker
  const sync: number = guard.measure(messages).usedTokens;
  // @ts-expect-error the options are ContextGuard's
  await guard.measure(messages, { emergency: 'yes' });
  guard.free();
  await w.terminate();
  void [usable, state, visible, rendered, n, total, rows, sent, sync, same];
  return result;
}

// A worker guard with a known format types its messages and system as ContextGuard does.
type Question = { role: 'user'; content: string };
export async function typedWorkerGuard(messages: readonly Question[]): Promise<Question[]> {
  const guard = await createWorkerGuard(worker, { model: 'claude-sonnet-4-5', format: 'anthropic' });
  const asAny: WorkerGuard = guard;
  const r = await guard.prepare(messages, { system: [{ type: 'text', text: 'Be brief.' }] });
  const system: string | AnthropicTextBlock[] | null = r.system;
  const w = await connectGuardWorker(worker);
  const required: string[] = (await w.readAttachmentTool({ format: 'anthropic' })).input_schema.required;
  const history: Question[] = (await w.resolveHistory([{ messages: r.checkpoint?.messages ?? messages }], { format: 'anthropic' })).messages;
  // @ts-expect-error an Anthropic guard's system is a string or text blocks
  await guard.measure(messages, { system: { parts: [{ text: 'x' }] } });
  void [asAny, system, required, history];
  return r.messages;
}

export function workerThread(): Promise<void> {
  return serveGuard({
    methods: {
      rows(arg: { from: number }, ctx: MethodContext) {
        const guard = ctx.guard(1);
        ctx.progress({ from: arg.from });
        return { rows: ctx.messages?.length ?? 0, used: guard.measure(ctx.messages ?? []).usedTokens, n: ctx.api.countTokens('x') };
      },
    },
  });
}
