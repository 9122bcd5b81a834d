// Anthropic Messages (`format: 'anthropic'`): `MessageParam[]` from `@anthropic-ai/sdk` in,
// `r.messages` and `r.system` back into `anthropic.messages.create`. Type-level only.
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const anthropic: Anthropic;
declare const worker: Worker;
const model = 'claude-sonnet-4-5';
const max_tokens = 4096;

export async function messages(messages: MessageParam[], system: TextBlockParam[], tools: ToolUnion[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'anthropic' });
  const counted: number = countMessages(messages, { model, format: 'anthropic', tools, system }).total;
  const used: number = guard.measure(messages, { tools, system: 'Be brief.' }).usedTokens;
  // Prompt caching on the system text, written inline.
  guard.measure(messages, { system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }] });

  const sources = guard.guardSources(messages, { tools, system });
  await anthropic.messages.create({ model, max_tokens, system: sources.system ?? undefined, messages: sources.messages, tools: [...tools, readAttachmentTool({ format: 'anthropic' })] });

  const r = await guard.prepare(messages, {
    tools,
    system,
    summarize: async ({ messages: source, system: earlier, instructions, maxTokens, signal }) => {
      const reply = await anthropic.messages.create(
        { model, max_tokens: maxTokens, system: [{ type: 'text', text: instructions }, ...(typeof earlier === 'string' ? [{ type: 'text' as const, text: earlier }] : (earlier ?? []))], messages: source },
        { signal },
      );
      return reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    },
  });
  await anthropic.messages.create({ model, max_tokens, system: r.system ?? undefined, messages: r.messages, tools });

  const stored: MessageParam[] = r.checkpoint?.messages ?? messages;
  const history = resolveHistory([{ id: 't1', messages: stored, system: r.checkpoint?.system ?? null }], { format: 'anthropic' });
  await anthropic.messages.create({ model, max_tokens, system: history.system ?? undefined, messages: history.messages });

  const wg = await createWorkerGuard(worker, { model, format: 'anthropic' });
  const wr = await wg.guardSources(messages, { system });
  await anthropic.messages.create({ model, max_tokens, system: wr.system ?? undefined, messages: wr.messages });
  void [counted, used];
}

export function readonlyArrays(messages: readonly MessageParam[]): MessageParam[] {
  return new ContextGuard({ format: 'anthropic' }).guardSources(messages).messages;
}

export function wrongFormats(chat: ChatCompletionMessageParam[], items: ResponseInputItem[]): void {
  const guard = new ContextGuard({ model, format: 'anthropic' });
  // @ts-expect-error Chat Completions messages are not Anthropic messages
  guard.measure(chat);
  // @ts-expect-error nor are Responses input items
  countMessages(items, { format: 'anthropic' });
}

// A reply's content blocks (`ContentBlock[]`, the response's own types) go back as an assistant
// message without a cast; a misspelled field next to SDK messages is an error.
export async function replies(messages: MessageParam[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'anthropic' });
  const reply = await anthropic.messages.create({ model, max_tokens, messages });
  const r = await guard.prepare([...messages, { role: 'assistant', content: reply.content }, { role: 'user', content: 'And tomorrow?' }]);
  await anthropic.messages.create({ model, max_tokens, messages: r.messages });
  // @ts-expect-error Anthropic has no tool role
  guard.measure([...messages, { role: 'tool', content: 'x' }]);
  // @ts-expect-error a misspelled field
  guard.measure([...messages, { role: 'user', contnt: 'typo' }]);
}
