// Messages written out in each format are checked against that format's types under `strict`:
// a misspelled field, a role the format lacks, or a role without the fields it needs (an OpenAI
// tool result without `tool_call_id`) is a compile error — each `@ts-expect-error` below fails
// the check if the declarations stop catching it. Untyped JSON (`WireMessage[]`, `any`) goes in
// unchecked. The SDKs' own message types: tests/ts/sdk/.
import { ContextGuard, countMessages, listAttachments, type WireMessage } from 'ctxguard';

const openai = new ContextGuard({ model: 'gpt-4o', format: 'openai' });
openai.measure([
  { role: 'system', content: 'Be brief.' },
  { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }], name: 'ops' },
  { role: 'user', content: 'Weather in Paris?', name: 'ana' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: '18 °C' },
  { role: 'assistant', content: 'It is 18 °C.', refusal: null },
  { role: 'function', name: 'weather', content: null },
]);
// @ts-expect-error a misspelled field: `contnt`
openai.measure([{ role: 'user', contnt: 'typo' }]);
// @ts-expect-error a tool result without the call it answers (`tool_call_id`)
openai.measure([{ role: 'tool', content: 'x' }]);
// @ts-expect-error a misspelled optional field: `tool_cals`
openai.measure([{ role: 'assistant', content: 'x', tool_cals: [] }]);
// @ts-expect-error a Gemini Content is not a Chat Completions message
openai.measure([{ role: 'model', parts: [{ text: 'hi' }] }]);
// @ts-expect-error a typo in one message of many
void openai.prepare([{ role: 'user', content: 'ok' }, { role: 'assistant', content: 'ok', nmae: 'bot' }]);
// @ts-expect-error countMessages checks the same way
countMessages([{ role: 'user', contnt: 'typo' }], { format: 'openai' });
// @ts-expect-error and listAttachments
listAttachments([{ role: 'tool', content: 'x' }], { format: 'openai' });

const anthropic = new ContextGuard({ model: 'claude-sonnet-4-5', format: 'anthropic' });
anthropic.measure([
  { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
  { role: 'assistant', content: 'Hello.' },
]);
// @ts-expect-error Anthropic has no tool role: results are tool_result blocks of a user message
anthropic.measure([{ role: 'tool', content: 'x' }]);
// @ts-expect-error a misspelled field
anthropic.measure([{ role: 'user', contnt: 'typo' }]);

const gemini = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini' });
gemini.measure([{ role: 'user', parts: [{ text: 'Hi' }] }, { role: 'model', parts: [{ text: 'Hello.' }] }]);
// @ts-expect-error a misspelled field: `prts`
gemini.measure([{ role: 'user', prts: [{ text: 'Hi' }] }]);
// @ts-expect-error Gemini Contents have parts, not content
gemini.measure([{ role: 'user', content: 'Hi' }]);

const aiSdk = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
aiSdk.measure([
  { role: 'user', content: 'Weather?', providerOptions: { openai: { user: 'u1' } } },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: {} }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'text', value: '18 °C' } }] },
]);
// @ts-expect-error an AI SDK tool message holds tool-result parts, not a string
aiSdk.measure([{ role: 'tool', content: 'x' }]);
// @ts-expect-error a misspelled field: `providerOption`
aiSdk.measure([{ role: 'user', content: 'x', providerOption: {} }]);

const responses = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses' });
responses.measure([
  { role: 'user', content: 'Weather?' },
  { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
  { type: 'function_call_output', call_id: 'c1', output: '18 °C' },
  { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: '18 °C.' }] },
]);
// @ts-expect-error a misspelled field on a message item: `stauts`
responses.measure([{ role: 'user', content: 'x', stauts: 'completed' }]);

// A guard without a format takes any format's messages, and still catches what fits none.
const any = new ContextGuard({ model: 'gpt-4o' });
any.measure([{ role: 'user', content: 'Hi' }]);
// @ts-expect-error no format has a tool message with string content and no call id
any.measure([{ role: 'tool', content: 'x' }]);
// @ts-expect-error no format has `contnt`
any.measure([{ role: 'user', contnt: 'typo' }]);

// Untyped JSON goes in unchecked (an index signature, or `any` from JSON.parse).
declare const stored: WireMessage[];
openai.measure(stored);
const parsed = JSON.parse('[{"role":"user","content":"hi"}]');
openai.measure(parsed);
// What comes back is what went in.
const back: WireMessage[] = openai.guardSources(stored).messages;
void back;
