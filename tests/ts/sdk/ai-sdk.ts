// Vercel AI SDK (`format: 'ai-sdk'`): `ModelMessage[]` from `ai` in, `r.messages` back into
// `generateText({ messages })` and `r.system` as its `instructions` / `system`. Type-level only.
import { generateText, jsonSchema, tool, type LanguageModel, type ModelMessage, type SystemModelMessage, type ToolSet } from 'ai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { Content } from '@google/genai';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const model: LanguageModel;
declare const worker: Worker;

export async function modelMessages(messages: ModelMessage[], system: SystemModelMessage[], tools: ToolSet): Promise<void> {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const counted: number = countMessages(messages, { model: 'gpt-4o', format: 'ai-sdk', tools, system }).total;
  const used: number = guard.measure(messages, { tools, system: 'Be brief.' }).usedTokens;

  const read = readAttachmentTool({ format: 'ai-sdk' }).read_attachment;
  const sources = guard.guardSources(messages, { tools, system });
  await generateText({
    model,
    instructions: sources.system ?? undefined,
    messages: sources.messages,
    tools: { ...tools, read_attachment: tool({ description: read.description, inputSchema: jsonSchema(read.inputSchema), execute: async () => '' }) },
  });

  const r = await guard.prepare(messages, {
    tools,
    system,
    summarize: async ({ messages: source, system: earlier, instructions, maxTokens, signal }) =>
      (await generateText({
        model,
        instructions: [{ role: 'system', content: instructions }, ...(earlier ?? [])],
        messages: [...source, { role: 'user', content: 'Summarize the conversation above.' }],
        maxOutputTokens: maxTokens,
        abortSignal: signal,
      })).text,
  });
  await generateText({ model, instructions: r.system ?? undefined, messages: r.messages, tools });
  await generateText({ model, system: r.system ?? undefined, messages: r.messages });
  // AI SDK 7 rejects system messages in `messages`; the types say they are apart.
  // @ts-expect-error no system message is left in r.messages
  const none: SystemModelMessage = r.messages[0]!;

  const stored: ModelMessage[] = r.checkpoint?.messages ?? messages;
  const history = resolveHistory([{ id: 't1', messages: stored, system: r.checkpoint?.system ?? null }], { format: 'ai-sdk' });
  await generateText({ model, instructions: history.system ?? undefined, messages: history.messages });

  const wg = await createWorkerGuard(worker, { model: 'gpt-4o', format: 'ai-sdk' });
  const wr = await wg.prepare(messages, { system: 'Be brief.', tools });
  await generateText({ model, instructions: wr.system ?? undefined, messages: wr.messages });
  void [counted, used, none];
}

export function readonlyArrays(messages: readonly ModelMessage[]): ModelMessage[] {
  return new ContextGuard({ format: 'ai-sdk' }).guardSources(messages).messages;
}

export function wrongFormats(chat: ChatCompletionMessageParam[], items: ResponseInputItem[], gemini: Content[]): void {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  // @ts-expect-error Chat Completions messages are not AI SDK messages
  guard.measure(chat);
  // @ts-expect-error nor are Responses input items
  countMessages(items, { format: 'ai-sdk' });
  // @ts-expect-error nor are Gemini contents
  guard.guardSources(gemini);
  // @ts-expect-error an AI SDK guard's tools are a ToolSet, not an array
  guard.measure([], { tools: [{ type: 'function', function: { name: 'f' } }] });
}

// A reply's messages (`response.messages`, the SDK's own types) go into the history as they are;
// a tool message written out with string content, or a misspelled field, is an error.
export async function replies(messages: ModelMessage[]): Promise<void> {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const { response } = await generateText({ model, messages });
  const r = await guard.prepare([...messages, ...response.messages, { role: 'user', content: 'And tomorrow?' }]);
  await generateText({ model, messages: r.messages });
  // @ts-expect-error a tool message holds tool-result parts
  guard.measure([...messages, { role: 'tool', content: 'x' }]);
  // @ts-expect-error a misspelled field
  guard.measure([...messages, { role: 'user', content: 'x', providerOption: {} }]);
}
