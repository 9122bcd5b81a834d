// Vercel AI SDK UI messages (`format: 'ai-sdk-ui'`): `UIMessage[]` from useChat in,
// `r.messages` back as the UI messages useChat's transport sends, `r.system` as `streamText`'s
// `instructions`. Type-level only.
import { convertToModelMessages, DefaultChatTransport, streamText, type LanguageModel, type ModelMessage, type UIMessage } from 'ai';
import { ContextGuard, countMessages, detectFormat } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

declare const model: LanguageModel;
declare const worker: Worker;

type MyMessage = UIMessage<{ at: number }, { weather: { city: string } }>;

export async function uiMessages(messages: MyMessage[]): Promise<void> {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk-ui' });
  const counted: number = countMessages(messages, { model: 'gpt-4o', format: 'ai-sdk-ui', system: 'Be brief.' }).total;
  const r = await guard.prepare(messages, {
    system: 'Be brief.',
    summarize: async ({ messages: older, instructions }) => `${instructions}: ${older.length}`,
  });
  // The app's own message type comes back.
  const back: MyMessage[] = r.messages;
  await streamText({ model, instructions: r.system ?? undefined, messages: await convertToModelMessages(r.messages) });

  const wg = await createWorkerGuard(worker, { model: 'gpt-4o', format: 'ai-sdk-ui' });
  const transport = new DefaultChatTransport<MyMessage>({
    api: '/api/chat',
    prepareSendMessagesRequest: async ({ id, messages: sending, body }) => {
      const p = await wg.prepare(sending, { system: 'Be brief.' });
      const next: MyMessage[] = p.messages;
      return { body: { ...body, id, messages: next, system: p.system } };
    },
  });
  const format: string | null = detectFormat(messages);
  void [counted, back, transport, format];
}

export function wrongFormat(model: ModelMessage[]): void {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk-ui' });
  // @ts-expect-error AI SDK model messages are not UI messages
  guard.measure(model);
}
