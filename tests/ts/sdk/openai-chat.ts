// OpenAI Chat Completions (`format: 'openai'`): `ChatCompletionMessageParam[]` from the `openai`
// package in, `r.messages` back into `openai.chat.completions.create`. Type-level only.
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelMessage } from 'ai';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory, type StoredTurn } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const openai: OpenAI;
declare const worker: Worker;
const model = 'gpt-4o';

export async function chat(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'openai' });
  const counted: number = countMessages(messages, { model, format: 'openai', tools, system: 'Be brief.' }).total;
  const used: number = guard.measure(messages, { tools, system: [{ type: 'text', text: 'Be brief.' }] }).usedTokens;

  const sources = guard.guardSources(messages, { tools });
  await openai.chat.completions.create({ model, messages: sources.messages, tools: [...tools, readAttachmentTool()] });

  const r = await guard.prepare(messages, {
    tools,
    summarize: async ({ messages: source, system, instructions, maxTokens, signal }) => {
      const none: null = system; // Chat Completions has no separate system
      const c = await openai.chat.completions.create(
        { model: 'gpt-4o-mini', max_completion_tokens: maxTokens, messages: [{ role: 'system', content: instructions }, ...source] },
        { signal },
      );
      return c.choices[0]?.message.content ?? String(none);
    },
  });
  await openai.chat.completions.create({ model, messages: r.messages, tools });
  const system: null = r.system;

  // The checkpoint is persisted as a turn, and resolved back into the same message type.
  const stored: ChatCompletionMessageParam[] = r.checkpoint?.messages ?? messages;
  const turns: StoredTurn<'openai', ChatCompletionMessageParam>[] = [{ id: 1, messages: stored }];
  const history = resolveHistory(turns, { format: 'openai' });
  await openai.chat.completions.create({ model, messages: history.messages });
  const settled: string = (await guard.settle(messages)).rendered;
  guard.observeUsage({ messages: r.messages, tools, usage: { prompt_tokens: 10 } });

  // The same guard in a worker.
  const wg = await createWorkerGuard(worker, { model, format: 'openai' });
  const wr = await wg.prepare(messages, { tools });
  await openai.chat.completions.create({ model, messages: wr.messages });
  void [counted, used, system, settled];
}

export function readonlyArrays(messages: readonly ChatCompletionMessageParam[]): ChatCompletionMessageParam[] {
  return new ContextGuard({ format: 'openai' }).guardSources(messages).messages;
}

export function wrongFormats(anthropic: MessageParam[], ai: ModelMessage[]): void {
  const guard = new ContextGuard({ model, format: 'openai' });
  // @ts-expect-error Anthropic messages are not Chat Completions messages
  guard.measure(anthropic);
  // @ts-expect-error nor are AI SDK messages
  countMessages(ai, { format: 'openai' });
  // @ts-expect-error the system option is a string or text parts, not a system message
  guard.measure([], { system: { role: 'system', content: 'x' } });
}

// A reply as the SDK returns it (`ChatCompletionMessage`) goes into the history as it is, and
// messages written out next to SDK-typed ones are checked (tests/ts/messages.ts has the rest).
export async function replies(messages: ChatCompletionMessageParam[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'openai' });
  const reply = (await openai.chat.completions.create({ model, messages })).choices[0]?.message;
  if (!reply) return;
  const r = await guard.prepare([...messages, reply, { role: 'user', content: 'And tomorrow?' }]);
  await openai.chat.completions.create({ model, messages: r.messages });
  // @ts-expect-error a tool result written out without the call it answers
  guard.measure([...messages, { role: 'tool', content: '18 °C' }]);
  // @ts-expect-error a misspelled field next to SDK messages
  guard.measure([...messages, { role: 'user', contnt: 'typo' }]);
}
