// OpenAI Responses API (`format: 'openai-responses'`): `ResponseInputItem[]` in, `r.messages` back
// into `openai.responses.create({ input })`, `r.system` as its `instructions`. Type-level only.
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import type { Content } from '@google/genai';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const openai: OpenAI;
declare const worker: Worker;
const model = 'gpt-5';

export async function responses(input: ResponseInputItem[], tools: Tool[], instructions: string | null): Promise<void> {
  const guard = new ContextGuard({ model, format: 'openai-responses' });
  const counted: number = countMessages(input, { model, format: 'openai-responses', tools, system: instructions }).total;
  const used: number = guard.measure(input, { tools, system: instructions }).usedTokens;

  const sources = guard.guardSources(input, { tools, system: instructions });
  await openai.responses.create({ model, input: sources.messages, instructions: sources.system, tools: [...tools, readAttachmentTool({ format: 'openai-responses' })] });

  const r = await guard.prepare(input, {
    tools,
    system: instructions,
    summarize: async ({ messages: source, system: earlier, instructions: howTo, maxTokens, signal }) => {
      const res = await openai.responses.create(
        { model: 'gpt-5-mini', instructions: [howTo, earlier ?? ''].join('\n\n'), input: source, max_output_tokens: maxTokens },
        { signal },
      );
      return res.output_text;
    },
  });
  await openai.responses.create({ model, input: r.messages, instructions: r.system ?? undefined, tools });
  const system: string | null = r.system;

  const stored: ResponseInputItem[] = r.checkpoint?.messages ?? input;
  const history = resolveHistory([{ id: 't1', messages: stored, system: r.checkpoint?.system ?? null }], { format: 'openai-responses' });
  await openai.responses.create({ model, input: history.messages, instructions: history.system });

  const wg = await createWorkerGuard(worker, { model, format: 'openai-responses' });
  const wr = await wg.prepare(input, { system: instructions });
  await openai.responses.create({ model, input: wr.messages, instructions: wr.system });
  void [counted, used, system];
}

export function wrongFormats(chat: ChatCompletionMessageParam[], gemini: Content[]): void {
  const guard = new ContextGuard({ model, format: 'openai-responses' });
  // @ts-expect-error Chat Completions messages are not Responses input items
  guard.measure(chat);
  // @ts-expect-error nor are Gemini contents
  countMessages(gemini, { format: 'openai-responses' });
  // @ts-expect-error instructions are a string
  guard.measure([], { system: [{ type: 'text', text: 'x' }] });
}
