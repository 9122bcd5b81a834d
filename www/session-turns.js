// The turns the "Whole conversation" card plays on top of the loaded conversation: a coding
// agent's session, each turn a user task, one `read_file` call and its output (source text of
// about the size asked for), then the assistant's answer — written in each wire format ctxguard
// reads (docs/formats.md). Deterministic: turn i is the same text every time.

import { rng } from './sample.js';

const WORDS = ['ledger', 'invoice', 'period', 'tenant', 'amount', 'rounding', 'currency', 'billing', 'refund', 'schedule', 'payment', 'account', 'balance', 'credit', 'entry', 'report'];
const FILES = ['src/billing/period.ts', 'src/billing/prorate.ts', 'src/tax/vat.ts', 'src/ledger/entry.ts', 'src/ledger/balance.ts', 'src/api/invoices.ts', 'src/api/refunds.ts', 'src/util/dates.ts'];
/** Characters of generated source per token (o200k_base on this text, about). */
const CHARS_PER_TOKEN = 3.6;

/** Turn i's file: its path and about `tokens` tokens of TypeScript. */
export function fileOf(i, tokens) {
  const r = rng(i * 7919 + 17);
  const pick = () => WORDS[Math.floor(r() * WORDS.length)];
  const path = FILES[i % FILES.length].replace(/\.ts$/, i < FILES.length ? '.ts' : `-${Math.floor(i / FILES.length)}.ts`);
  const lines = [`// ${path} (turn ${i})`, "import { round } from '@acme/money';", ''];
  let chars = lines.join('\n').length;
  for (let n = 0; chars < tokens * CHARS_PER_TOKEN; n++) {
    const [a, b, c] = [pick(), pick(), pick()];
    const line = n % 4 === 0
      ? `export function ${a}${c[0].toUpperCase()}${c.slice(1)}${n}(${b}: number, days: number): number {`
      : n % 4 === 3 ? '}' : `  return round(${b} * ${Math.floor(r() * 1000)} / days, 2); // ${a} ${c}`;
    lines.push(line);
    chars += line.length + 1;
  }
  return { path, text: lines.join('\n') };
}

const question = (i, path) => `Task ${i}: read ${path} and tell me whether its rounding is consistent with the rest of the billing code.`;
const answer = (i, path) => `Turn ${i}: ${path} rounds with round(…, 2) in every branch; it is consistent. Next, I would check the callers.`;
const callId = (i) => `call_play_${String(i).padStart(4, '0')}`;

/** The messages of turn `i` in `format`, up to the tool output (what the next model call gets), and the answer that follows. */
export function turnMessages(format, i, tokens) {
  const { path, text } = fileOf(i, tokens);
  const id = callId(i);
  const args = { path };
  const q = question(i, path);
  const a = answer(i, path);
  switch (format) {
    case 'anthropic':
      return {
        ask: [
          { role: 'user', content: q },
          { role: 'assistant', content: [{ type: 'text', text: `Reading ${path}.` }, { type: 'tool_use', id, name: 'read_file', input: args }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] },
        ],
        reply: { role: 'assistant', content: a },
      };
    case 'ai-sdk':
      return {
        ask: [
          { role: 'user', content: q },
          { role: 'assistant', content: [{ type: 'text', text: `Reading ${path}.` }, { type: 'tool-call', toolCallId: id, toolName: 'read_file', input: args }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'read_file', output: { type: 'text', value: text } }] },
        ],
        reply: { role: 'assistant', content: a },
      };
    case 'openai-responses':
      return {
        ask: [
          { role: 'user', content: q },
          { type: 'function_call', call_id: id, name: 'read_file', arguments: JSON.stringify(args) },
          { type: 'function_call_output', call_id: id, output: text },
        ],
        reply: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: a }] },
      };
    case 'gemini':
      return {
        ask: [
          { role: 'user', parts: [{ text: q }] },
          { role: 'model', parts: [{ functionCall: { id, name: 'read_file', args } }] },
          { role: 'user', parts: [{ functionResponse: { id, name: 'read_file', response: { output: text } } }] },
        ],
        reply: { role: 'model', parts: [{ text: a }] },
      };
    default:
      return {
        ask: [
          { role: 'user', content: q },
          { role: 'assistant', content: `Reading ${path}.`, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify(args) } }] },
          { role: 'tool', tool_call_id: id, content: text },
        ],
        reply: { role: 'assistant', content: a },
      };
  }
}

/** An answer to a conversation that ends with the user's message, so the played turns start after it. */
export function closingReply(format) {
  const text = 'Here is what I found. Let me go through the billing files one by one.';
  if (format === 'openai-responses') return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] };
  if (format === 'gemini') return { role: 'model', parts: [{ text }] };
  return { role: 'assistant', content: text };
}
