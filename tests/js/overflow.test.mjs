// classifyProviderError through the built package: the shapes hosts really catch (SDK errors,
// fetch wrappers, raw bodies), the negatives that must not trigger a compaction, and input that
// must never make it throw (cycles, BigInt, throwing getters, revoked proxies, huge strings).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { classifyProviderError, countTokens } from 'ctxguard';
import { withFrozen } from './helpers.mjs';

/** Real overflow messages with the figures each states, and where it was seen (shared with tests/core/overflow_counts.rs). */
const FIGURES_TABLE = JSON.parse(fs.readFileSync(new URL('./fixtures/overflow-figures.json', import.meta.url), 'utf8'));

/** The figures of a result that states none (every kind but an overflow with a count). */
const NO_FIGURES = { promptTokens: null, completionTokens: null, requestedTokens: null, limit: null, countQualifier: null };
/** An overflow; `figures` are the ones its message states (`{ promptTokens, limit, ... }`). */
const overflow = (reason, figures = {}) => ({ kind: 'context_overflow', compactAndRetry: true, reason, ...NO_FIGURES, ...figures });
const payload = (reason) => ({ kind: 'payload_too_large', compactAndRetry: false, reason, ...NO_FIGURES });
const rate = (reason) => ({ kind: 'rate_limit', compactAndRetry: false, reason, ...NO_FIGURES });
const other = { kind: 'other', compactAndRetry: false, reason: 'none', ...NO_FIGURES };
const stated = (promptTokens, limit) => ({ promptTokens, limit, countQualifier: 'exact' });

/** Like the OpenAI Node SDK's APIError: status, the parsed body as `error`, code/type/param copied. */
class FakeOpenAIError extends Error {
  constructor(status, body) {
    super(`${status} ${body?.error?.message ?? 'status code (no body)'}`);
    this.status = status;
    this.error = body?.error;
    this.code = body?.error?.code ?? null;
    this.param = body?.error?.param ?? null;
    this.type = body?.error?.type;
    this.headers = { 'x-request-id': 'req_123' };
  }
}

/** Like the Anthropic SDK's APIError: message is status + the body's JSON, `error` is the whole body. */
class FakeAnthropicError extends Error {
  constructor(status, body) {
    super(`${status} ${JSON.stringify(body)}`);
    this.status = status;
    this.error = body;
  }
}

/** An error class whose status lives behind a prototype getter. */
class GetterError extends Error {
  #status;
  constructor(status, message) {
    super(message);
    this.#status = status;
  }
  get status() {
    return this.#status;
  }
}

test('OpenAI SDK errors', () => {
  const overflowBody = {
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
  assert.deepEqual(classifyProviderError(new FakeOpenAIError(400, overflowBody)), overflow('marker:context_length_exceeded', stated(204308, 128000)));

  const unsupported = {
    error: {
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'unsupported_parameter',
    },
  };
  assert.deepEqual(classifyProviderError(new FakeOpenAIError(400, unsupported)), other);

  const tpm = {
    error: {
      message:
        'Rate limit reached for gpt-4o in organization org-XXXX on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754. Please try again in 18.642s.',
      type: 'tokens',
      param: null,
      code: 'rate_limit_exceeded',
    },
  };
  assert.deepEqual(classifyProviderError(new FakeOpenAIError(429, tpm)), rate('status:429'));

  const key = {
    error: {
      message: 'Incorrect API key provided: sk-xx. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  };
  assert.deepEqual(classifyProviderError(new FakeOpenAIError(401, key)), other);
  assert.deepEqual(classifyProviderError(new FakeOpenAIError(500, undefined)), other);
});

test('Anthropic SDK errors', () => {
  const tooLong = {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
    request_id: 'req_011CVQe1dLrGNMJyE1ghG1av',
  };
  assert.deepEqual(classifyProviderError(new FakeAnthropicError(400, tooLong)), overflow('marker:prompt_too_long', stated(208310, 200000)));

  const tooBig = { error: { type: 'request_too_large', message: 'Request exceeds the maximum size' } };
  assert.deepEqual(classifyProviderError(new FakeAnthropicError(413, tooBig)), payload('marker:request_too_large'));

  const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  assert.deepEqual(classifyProviderError(new FakeAnthropicError(529, overloaded)), rate('marker:overloaded'));

  const emptyContent = {
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message: 'messages.5: all messages must have non-empty content except for the optional final assistant message',
    },
  };
  assert.deepEqual(classifyProviderError(new FakeAnthropicError(400, emptyContent)), other);
});

test('fetch wrappers: status plus the raw body text', () => {
  const gemini = JSON.stringify({
    error: {
      code: 400,
      message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
      status: 'INVALID_ARGUMENT',
    },
  });
  assert.deepEqual(classifyProviderError({ status: 400, body: gemini }), overflow('marker:exceeds_maximum_tokens', stated(1200293, 1048576)));

  const llamaCpp =
    '{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}';
  // No figure in the text: llama.cpp's n_prompt_tokens / n_ctx fields are read.
  assert.deepEqual(classifyProviderError({ status: 400, body: llamaCpp }), overflow('marker:context_exceeded', stated(14429, 8192)));
  assert.deepEqual(classifyProviderError({ status: 400, body: JSON.parse(llamaCpp) }), overflow('marker:context_exceeded', stated(14429, 8192)));

  const nginx =
    '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.26.1</center>\r\n</body>\r\n</html>';
  assert.deepEqual(classifyProviderError({ status: 413, body: nginx }), payload('marker:request_entity_too_large'));

  const groq = {
    error: {
      message:
        'Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.',
      type: 'tokens',
      code: 'rate_limit_exceeded',
    },
  };
  assert.deepEqual(classifyProviderError({ status: 413, body: groq }), rate('marker:rate_limit'));

  // The status may arrive as a string, or only inside the body.
  assert.deepEqual(classifyProviderError({ status: '413' }), overflow('status:413'));
  assert.deepEqual(classifyProviderError({ statusCode: 413 }), overflow('status:413'));
  assert.deepEqual(
    classifyProviderError({
      body: '{"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n    \\"message\\": \\"Resource has been exhausted (e.g. check quota).\\",\\n    \\"status\\": \\"RESOURCE_EXHAUSTED\\"\\n  }\\n}\\n","code":429,"status":"Too Many Requests"}}',
    }),
    rate('status:429'),
  );
});

test('the status rules', () => {
  assert.deepEqual(classifyProviderError({ status: 400 }), other);
  assert.deepEqual(classifyProviderError({ status: 400, message: 'Bad Request' }), other);
  assert.deepEqual(classifyProviderError({ status: 413 }), overflow('status:413'));
  assert.deepEqual(classifyProviderError({ status: 429 }), rate('status:429'));
  assert.deepEqual(classifyProviderError({ status: 429, code: 'context_length_exceeded' }), rate('status:429'));
  assert.deepEqual(classifyProviderError({ status: 503 }), other);
  assert.deepEqual(classifyProviderError({ status: 500, message: 'the request exceeds the available context size' }), overflow('marker:context_size'));
  assert.deepEqual(classifyProviderError(new GetterError(413, 'Payload Too Large')), payload('marker:request_entity_too_large'));
  assert.deepEqual(classifyProviderError(new GetterError(413, '')), overflow('status:413'));
});

test('plain strings and localized messages', () => {
  assert.deepEqual(classifyProviderError('prompt is too long: 191989 tokens > 180000 maximum'), overflow('marker:prompt_too_long', stated(191989, 180000)));
  assert.deepEqual(classifyProviderError(new Error('Input is too long for requested model.')), overflow('marker:input_too_long'));
  assert.deepEqual(classifyProviderError({ status: 500, message: 'internal error: 输入内容超长，请缩短后重试' }), overflow('marker:zh_context'));
  assert.deepEqual(classifyProviderError({ message: 'コンテキスト長を超えています' }), overflow('marker:ja_context'));
  assert.deepEqual(classifyProviderError({ message: 'Die Eingabe überschreitet die maximale Kontextlänge' }), overflow('marker:de_context'));
  assert.deepEqual(classifyProviderError('Too many tokens per day, please wait before trying again.'), rate('marker:per_day_limit'));
});

test('never throws, whatever it is given', () => {
  const cyclic = { status: 400 };
  cyclic.self = cyclic;
  const cyclicBody = { error: { message: 'prompt is too long' } };
  cyclicBody.error.parent = cyclicBody;
  const throwingGetter = {
    get status() {
      throw new Error('boom');
    },
    get body() {
      throw new Error('boom');
    },
    message: 'context_length_exceeded',
  };
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const hostileProxy = new Proxy(
    {},
    {
      get() {
        throw new Error('get trap');
      },
      ownKeys() {
        throw new Error('ownKeys trap');
      },
      has() {
        throw new Error('has trap');
      },
      getOwnPropertyDescriptor() {
        throw new Error('gOPD trap');
      },
    },
  );
  const throwingLength = {
    get length() {
      throw new Error('length');
    },
    message: 'x',
  };
  const deep = {};
  let cursor = deep;
  for (let i = 0; i < 10_000; i++) cursor = cursor.error = {};
  const inputs = [
    undefined,
    null,
    0,
    -1,
    NaN,
    Infinity,
    true,
    '',
    '{',
    '\ud800 lone surrogate \udfff',
    10n,
    Symbol('s'),
    () => 'fn',
    [],
    [1, [2, [3]]],
    {},
    Object.create(null),
    new Map([['status', 413]]),
    new Date(0),
    /regex/,
    new Uint8Array(1_000_000),
    new Array(5_000_000),
    { status: 10n, code: Symbol('c'), message: 42, body: () => {} },
    { status: {}, message: {}, code: [], body: [[[[[]]]]] },
    cyclic,
    { status: 400, body: cyclicBody },
    throwingGetter,
    revoked,
    { status: 400, body: revoked, error: hostileProxy },
    hostileProxy,
    throwingLength,
    { body: deep },
    { body: 'x'.repeat(5_000_000) },
    { message: '\u0000'.repeat(100_000) },
  ];
  for (const input of inputs) {
    let result;
    assert.doesNotThrow(() => {
      result = classifyProviderError(input);
    }, `input ${typeof input}`);
    assert.deepEqual(Object.keys(result).sort(), ['compactAndRetry', 'completionTokens', 'countQualifier', 'kind', 'limit', 'promptTokens', 'reason', 'requestedTokens']);
    assert.ok(['context_overflow', 'payload_too_large', 'rate_limit', 'other'].includes(result.kind));
    assert.equal(result.compactAndRetry, result.kind === 'context_overflow');
    assert.equal(typeof result.reason, 'string');
    assert.deepEqual(JSON.parse(JSON.stringify(result)), result);
  }
  // What could be read was read.
  assert.deepEqual(classifyProviderError({ status: 400, body: cyclicBody }), overflow('marker:prompt_too_long'));
  assert.deepEqual(classifyProviderError(throwingGetter), overflow('marker:context_length_exceeded'));
  assert.deepEqual(classifyProviderError({ status: 400, body: revoked, error: hostileProxy, message: 'Overloaded' }), rate('marker:overloaded'));
  assert.deepEqual(classifyProviderError(cyclic), other);
  assert.deepEqual(classifyProviderError([{ error: { code: 'context_length_exceeded' } }]), overflow('marker:context_length_exceeded'));
  // A marker beyond the scanned prefix of a huge message is not seen; one at the start is.
  assert.deepEqual(classifyProviderError({ message: `${'a'.repeat(1_000_000)} context_length_exceeded` }), other);
  assert.deepEqual(classifyProviderError({ message: `context_length_exceeded ${'a'.repeat(1_000_000)}` }), overflow('marker:context_length_exceeded'));
  // The module keeps working.
  assert.equal(countTokens('hello world'), 2);
});

test('does not modify its input', () => {
  const input = {
    status: 400,
    message: 'Bad Request',
    body: { error: { message: 'prompt is too long: 208310 tokens > 200000 maximum', type: 'invalid_request_error' } },
  };
  const result = withFrozen(input, (frozen) => classifyProviderError(frozen));
  assert.deepEqual(result, overflow('marker:prompt_too_long', stated(208310, 200000)));
});

test('echoed request fields are not scanned', () => {
  const echo = {
    status: 400,
    body: {
      error: { message: 'Invalid request' },
      messages: [{ role: 'user', content: 'Why do I get "prompt is too long" and context_length_exceeded errors?' }],
      input: 'maximum context length',
    },
  };
  assert.deepEqual(classifyProviderError(echo), other);
});

test('the figures every overflow wording states, as plain objects and as SDK errors', () => {
  assert.ok(FIGURES_TABLE.length >= 60, `${FIGURES_TABLE.length} cases`);
  for (const { source, error, figures } of FIGURES_TABLE) {
    const r = classifyProviderError(error);
    assert.equal(r.kind, 'context_overflow', source);
    assert.deepEqual({ ...r, kind: undefined, reason: undefined }, { ...overflow('', figures), kind: undefined, reason: undefined }, source);
  }
  // The same messages inside the SDKs' error classes.
  const split = FIGURES_TABLE.find((c) => c.source.includes('chatbot-ui/issues/102'));
  const openai = new FakeOpenAIError(400, split.error.body);
  assert.deepEqual(classifyProviderError(openai), overflow('marker:context_length_exceeded', split.figures));
  assert.deepEqual(split.figures, { promptTokens: 3120, completionTokens: 1000, requestedTokens: 4120, limit: 4097, countQualifier: 'exact' });
  const anthropic = new FakeAnthropicError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again' } });
  assert.deepEqual(classifyProviderError(anthropic), overflow('marker:context_limit', { promptTokens: 178959, completionTokens: 64000, limit: 200000, countQualifier: 'exact' }));
  // Numbers in errors of other kinds are never read.
  const tpm = new FakeOpenAIError(429, { error: { message: 'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754.', code: 'rate_limit_exceeded' } });
  assert.deepEqual(classifyProviderError(tpm), rate('status:429'));
});
