// Gemini (`format: 'gemini'`): `Content[]` from `@google/genai` in, `r.messages` back as
// `contents` and `r.system` as `config.systemInstruction` of `generateContent`. Type-level only.
import type { Content, GoogleGenAI, Tool } from '@google/genai';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ModelMessage } from 'ai';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const genai: GoogleGenAI;
declare const worker: Worker;
const model = 'gemini-2.5-flash';

export async function contents(contents: Content[], systemInstruction: Content, tools: Tool[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'gemini' });
  const counted: number = countMessages(contents, { model, format: 'gemini', tools, system: systemInstruction }).total;
  const used: number = guard.measure(contents, { tools, system: 'Be brief.' }).usedTokens;

  const sources = guard.guardSources(contents, { tools, system: systemInstruction });
  await genai.models.generateContent({
    model,
    contents: sources.messages,
    config: { systemInstruction: sources.system ?? undefined, tools: [...tools, readAttachmentTool({ format: 'gemini' })] },
  });

  const r = await guard.prepare(contents, {
    tools,
    system: systemInstruction,
    summarize: async ({ messages: source, system: earlier, instructions, maxTokens, signal }) => {
      const res = await genai.models.generateContent({
        model: 'gemini-2.5-flash-lite',
        contents: [...source, { role: 'user', parts: [{ text: instructions }] }],
        config: { systemInstruction: earlier ?? undefined, maxOutputTokens: maxTokens, abortSignal: signal },
      });
      return res.text ?? '';
    },
  });
  await genai.models.generateContent({ model, contents: r.messages, config: { systemInstruction: r.system ?? undefined, tools } });

  const stored: Content[] = r.checkpoint?.messages ?? contents;
  const history = resolveHistory([{ id: 't1', messages: stored, system: r.checkpoint?.system ?? null }], { format: 'gemini' });
  await genai.models.generateContent({ model, contents: history.messages, config: { systemInstruction: history.system ?? undefined } });

  const wg = await createWorkerGuard(worker, { model, format: 'gemini' });
  const wr = await wg.prepare(contents, { system: 'Be brief.' });
  await genai.models.generateContent({ model, contents: wr.messages, config: { systemInstruction: wr.system ?? undefined } });
  void [counted, used];
}

export function readonlyArrays(contents: readonly Content[]): Content[] {
  return new ContextGuard({ format: 'gemini' }).guardSources(contents).messages;
}

export function wrongFormats(chat: ChatCompletionMessageParam[], anthropic: MessageParam[], ai: ModelMessage[]): void {
  const guard = new ContextGuard({ model, format: 'gemini' });
  // @ts-expect-error Chat Completions messages are not Gemini contents
  guard.measure(chat);
  // @ts-expect-error nor are Anthropic messages
  countMessages(anthropic, { format: 'gemini' });
  // @ts-expect-error nor are AI SDK messages
  void guard.prepare(ai);
}

// A reply's Content (`candidates[0].content`, the SDK's own type) goes into the history as it is;
// a misspelled field next to SDK Contents is an error.
export async function replies(contents: Content[]): Promise<void> {
  const guard = new ContextGuard({ model, format: 'gemini' });
  const reply = (await genai.models.generateContent({ model, contents })).candidates?.[0]?.content;
  const r = await guard.prepare([...contents, ...(reply ? [reply] : []), { role: 'user', parts: [{ text: 'And tomorrow?' }] }]);
  await genai.models.generateContent({ model, contents: r.messages });
  // @ts-expect-error Gemini Contents have parts, not content
  guard.measure([...contents, { role: 'user', content: 'x' }]);
  // @ts-expect-error a misspelled field
  guard.measure([...contents, { role: 'user', prts: [{ text: 'x' }] }]);
}
