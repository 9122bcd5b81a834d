// Uses every export of 'ctxguard' with the declared types. `tsc --noEmit -p tests/ts/` must pass;
// the @ts-expect-error lines prove the declarations are precise (no `any` sneaking through).
import {
  ContextGuard,
  resolveHistory,
  chainPreModelHooks,
  classifyProviderError,
  compactToolOutput,
  countMessages,
  countTokens,
  detectFormat,
  listAttachments,
  type ListedAttachment,
  type SourceLimits,
  type MessagePlace,
  knownModels,
  modelInfo,
  previewAttachment,
  readAttachment,
  readAttachmentTool,
  version,
  memoryStats,
  type MemoryStats,
  type AttachmentPage,
  type Settlement,
  type ResolvedHistory,
  type StoredTurn,
  type ModelInput,
  type PreModelHook,
  type ProviderErrorClassification,
  type ProviderErrorInput,
  type Checkpoint,
  type DegradedReason,
  type RestoreResult,
  type PrepareResult,
  type ProgressEvent,
  type SessionState,
  CacheDecision,
  type SummarizeRequest,
  type Budget,
  type CompactResult,
  type GuardSourcesOptions,
  type GuardSourcesResult,
  type ProtectionTrace,
  type DropReason,
  type CacheStats,
  type CalibrationState,
  type CalibrationSummary,
  type CostEstimate,
  type CountSource,
  type ModelCalibration,
  type ObserveUsageArgs,
  type Pricing,
  type ReportedUsage,
  type UsageObservation,
  type CompactionRecord,
  type ContextMetrics,
  type ContextState,
  type CountKind,
  type CountMessagesOptions,
  type CountMessagesResult,
  type CountTokensOptions,
  type CtxguardError,
  type Encoding,
  type ErrorCode,
  type Format,
  type GuardConfig,
  type JsonValue,
  type MeasureOptions,
  type MessageCount,
  type ModelInfo,
  type SourceBreakdown,
  type WireMessage,
  type WireTool,
  type AiSdkModelMessage,
  type AiSdkAssistantMessage,
  type AiSdkSystemMessage,
  type AiSdkToolSet,
  type AnthropicTextBlock,
  type FormatTypes,
  type GeminiContent,
  type MessageOf,
  type ReadAttachmentTool,
  type ResultMessage,
  type SystemIn,
  type SystemOf,
  type ToolsOf,
} from 'ctxguard';

const encoding: Encoding = 'o200k_base';
const format: Format = 'openai';
const tokenOptions: CountTokensOptions = { encoding, model: 'gpt-4o' };
const n: number = countTokens('hello world', tokenOptions);
countTokens('hello world');

const tools: WireTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
];
const messages: WireMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
];
const system: JsonValue[] = [{ type: 'text', text: 'Be brief.' }];
const messageOptions: CountMessagesOptions = { model: 'gpt-4o', encoding, format, system, tools };
const counted: CountMessagesResult = countMessages(messages, messageOptions);
const perMessage: number[] = counted.perMessage;
const kind: CountKind = counted.kind;
const exact: boolean = counted.exact;
const sum: number = counted.total + counted.toolDefinitions + counted.priming;
const placed: MessagePlace[] | undefined = countMessages(messages, { ...messageOptions, places: true }).places;
const placeOf: number | 'system' | undefined = placed?.[0]?.message;
const partsOf: number[] | null | undefined = placed?.[0]?.parts;
void [placeOf, partsOf];

const info: ModelInfo = modelInfo('claude-sonnet-4-5');
const window: number | null = info.contextWindow;
const provider: ModelInfo['provider'] = info.provider;
const models: ModelInfo[] = knownModels();
const v: string = version();
const mem: MemoryStats = memoryStats();
const wasmBytes: number = mem.wasmBytes;

const config: GuardConfig = {
  model: 'gpt-4o',
  contextWindow: 128_000,
  maxOutputTokens: 16_384,
  reservedOutputTokens: 8_192,
  economicBudget: null,
  triggerRatio: 0.8,
  targetRatio: 0.5,
  format,
  encoding,
};
const guard = new ContextGuard(config);
const budget: Budget = guard.budget;
const model: ModelInfo = guard.model;
const measureOptions: MeasureOptions = { tools, system: 'Be brief.' };
const metrics: ContextMetrics = guard.measure(messages, measureOptions);
const state: ContextState = metrics.state;
const breakdown: SourceBreakdown = metrics.breakdown;
const last: CompactionRecord | null = metrics.lastCompaction;
const stats: CacheStats = guard.cacheStats;

// Calibration and costs.
const countSource: CountSource = metrics.countSource;
const cost: CostEstimate | null = metrics.cost;
const cachedUsd: number | undefined = cost?.cachedInputUsd;
const usage: ReportedUsage = { input_tokens: 10, cache_read_input_tokens: 1200, cache_creation_input_tokens: null, output_tokens: 5 };
const observeArgs: ObserveUsageArgs = { messages, tools, system: 'Be brief.', usage };
const observed: CalibrationSummary | null = guard.observeUsage(observeArgs);
const lastObservation: UsageObservation | null = observed?.last ?? null;
const calibrationState: CalibrationState = guard.calibration;
const perModel: ModelCalibration | undefined = calibrationState.models['gpt-4o'];
guard.calibration = calibrationState;
const prices: Pricing = { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 };
const priced = new ContextGuard({ model: 'claude-sonnet-4-5', pricing: prices, economicBudget: { usd: 0.05 }, calibration: calibrationState });
void [countSource, cachedUsd, lastObservation, perModel, priced];
// @ts-expect-error countSource is one of three strings
const badSource: CountSource = 'guess';
// @ts-expect-error usage is required
guard.observeUsage({ messages });
const sourcesOptions: GuardSourcesOptions = { tools, emergency: false, onTrace: (t: ProtectionTrace) => void t.operation };
const guarded: GuardSourcesResult = guard.guardSources(messages, sourcesOptions);
const traces: ProtectionTrace[] = guarded.traces;
const dropped: { index: number | null; reason: DropReason | null; calls: string[] | null }[] = traces
  .filter((t) => t.operation === 'message_dropped')
  .map((t) => ({ index: t.messageIndex, reason: t.reason, calls: t.callIds }));
void dropped;
const compactedOut: CompactResult = compactToolOutput('log', { limit: 100, retrievalTool: 'get', callId: 'c1' });
const previewOut: CompactResult = previewAttachment('text', { limit: 100, name: 'a.txt', type: 'text/plain' });
const readTool: WireTool = readAttachmentTool({ format: 'anthropic' });
const page: AttachmentPage = readAttachment(new Map([['a', 'text']]), { id: 'a', offset: 0, limit: 10 });
const nextOffset: number | null = page.nextOffset;
const listed: ListedAttachment[] = listAttachments(messages, { format: 'openai', system: 'Be brief.' });
const listedPart: number | null = listed[0]?.part ?? null;
const fromList: AttachmentPage = readAttachment(new Map(listed.map((a) => [a.id, a.text])), { id: listed[0]?.id ?? 'x', offset: listed[0]?.offset ?? 0 });
const detected: 'openai' | 'anthropic' | 'ai-sdk' | 'ai-sdk-ui' | 'openai-responses' | 'gemini' | null = detectFormat({ contents: [] });
// @ts-expect-error a listed attachment's form is one of three
const badForm: ListedAttachment['form'] = 'image';
const limits: SourceLimits = guard.sourceLimits;
void [listedPart, fromList, detected, badForm, limits.attachmentBudget];
const prepared: Promise<PrepareResult> = guard.prepare(messages, {
  summarize: async (req: SummarizeRequest): Promise<SessionState> => ({ summary: `${req.messages.length} messages`, key_facts: [], decisions: [], plan: null, open_questions: [] }),
  onProgress: (e: ProgressEvent) => void e.elapsedMs,
  logger: (line: string) => void line,
  timeoutMs: 30_000,
  retryDelayMs: 1_000,
  force: false,
  guidance: 'Continue.',
});
void prepared.then((r) => {
  const reason: DegradedReason | null = r.degradedReason;
  const cp: Checkpoint | null = r.checkpoint;
  const state: SessionState | null = r.sessionState;
  const decision: CacheDecision | null = r.cacheDecision;
  const deferred: boolean = decision?.choice === 'continue' && r.traces.some((t) => t.cacheDecision?.reason === 'cheaper_to_continue');
  return [reason, cp, state, deferred];
});
const sessionGuard = new ContextGuard({ model: 'gpt-4o', strategy: 'session_state' });
void sessionGuard.prepare(messages, { sessionState: { summary: 'Where the last run ended.', key_facts: [], decisions: [], plan: null, open_questions: [] } });
// @ts-expect-error unknown strategy
new ContextGuard({ strategy: 'sessionstate' });
const overflowInput: ProviderErrorInput = { status: 400, message: "This model's maximum context length is 128000 tokens." };
const classified: ProviderErrorClassification = classifyProviderError(overflowInput);
const retry: boolean = classifyProviderError(new Error('boom')).compactAndRetry;
const addGuidance: PreModelHook = (input: ModelInput) => ({ ...input, messages: [...input.messages, { role: 'system', content: 'Be brief.' }] });
const chained: (input: ModelInput) => Promise<ModelInput> = chainPreModelHooks([addGuidance, () => undefined]);
const storedTurns: StoredTurn[] = [{ id: 't1', messages, status: 'completed' }];
const resolved: ResolvedHistory = resolveHistory(storedTurns, { limit: 10, checkpointKey: 'k' });
const settled: Promise<Settlement> = guard.settle(messages, { summarize: async () => ({ session_state: { summary: 's' }, memory_entries: [], reflections: [], learnings: [] }) });
void settled;
guard.free();
new ContextGuard().free();

// Vercel AI SDK model messages: what the host passes to generateText comes back typed the same.
const aiFormat: Format = 'ai-sdk';
const aiSystem: AiSdkSystemMessage[] = [{ role: 'system', content: 'Sei kurz.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }];
const aiMessages: AiSdkModelMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Was zeigt das Bild? 東京' },
      { type: 'image', image: new URL('https://example.com/a.png') },
      { type: 'file', data: 'SGFsbG8=', mediaType: 'text/plain', filename: 'a.txt' },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'zoom first' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'zoom', input: { factor: 2 } },
    ],
  },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'zoom', output: { type: 'json', value: { ok: true } } }] },
];
const aiTools: AiSdkToolSet = { zoom: { description: 'Zoom in', inputSchema: { type: 'object', properties: { factor: { type: 'number' } } } } };
const aiGuard = new ContextGuard({ model: 'claude-sonnet-4-5', format: aiFormat });
const aiCounted: CountMessagesResult = countMessages(aiMessages, { format: 'ai-sdk', tools: aiTools, system: aiSystem });
const aiMetrics: ContextMetrics = aiGuard.measure(aiMessages, { tools: aiTools, system: 'Sei kurz.' });
const aiGuarded: GuardSourcesResult<AiSdkModelMessage, AiSdkSystemMessage[]> = aiGuard.guardSources(aiMessages);
const aiPrepared = aiGuard.prepare(aiMessages, {
  system: aiSystem,
  summarize: async ({ messages, system: earlier, instructions }) => `${instructions.length} ${messages.length} ${earlier?.length ?? 0}`,
});
void aiPrepared.then((r) => {
  const sent: AiSdkModelMessage[] = r.messages;
  const instructions: AiSdkSystemMessage[] | null = r.system;
  const stored: AiSdkModelMessage[] | undefined = r.checkpoint?.messages;
  return resolveHistory([{ id: 't', messages: stored ?? [], system: r.checkpoint?.system ?? null }], { format: 'ai-sdk' }) && [sent, instructions];
});
const aiReadTool: { [key: string]: JsonValue } = readAttachmentTool({ format: 'ai-sdk' }).read_attachment.inputSchema;
void [aiCounted, aiMetrics, aiGuarded, aiReadTool];
// A guard whose format TypeScript knows takes and gives that format's types (FormatTypes); the
// official SDKs' own types are checked in tests/ts/sdk/. Plain literals work too.
const chatGuard: ContextGuard<'openai'> = new ContextGuard({ model: 'gpt-4o', format: 'openai' });
// A guard of a known format is still a ContextGuard (for a field or parameter typed `ContextGuard`).
const anyGuard: ContextGuard = chatGuard;
const chatSources = chatGuard.guardSources([{ role: 'user', content: 'Hi' }] as const, { system: [{ type: 'text', text: 'Be brief.' }] });
const chatSystem: null = chatSources.system;
const chatRead: ReadAttachmentTool<'openai'> = readAttachmentTool();
const chatReadName: 'read_attachment' = chatRead.function.name;

const responsesGuard = new ContextGuard({ model: 'gpt-5', format: 'openai-responses' });
const items = [
  { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
  { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
  { type: 'function_call_output', call_id: 'c1', output: 'rain' },
] as const;
void responsesGuard.prepare(items, { system: 'Be brief.', summarize: async ({ system: earlier }) => earlier ?? '' }).then((r) => {
  const instructions: string | null = r.system;
  const sent: ResultMessage<'openai-responses', (typeof items)[number]>[] = r.messages;
  return [instructions, sent];
});
const strict: boolean = readAttachmentTool({ format: 'openai-responses' }).strict;

const claudeGuard = new ContextGuard({ model: 'claude-sonnet-4-5', format: 'anthropic' });
const cached: SystemIn<'anthropic'> = [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }];
const claudeSystem: string | AnthropicTextBlock[] | null = claudeGuard.guardSources([{ role: 'user', content: 'Hi' }], { system: cached }).system;
const claudeTools: ToolsOf<'anthropic'> = [readAttachmentTool({ format: 'anthropic' }), { type: 'web_search_20250305', name: 'web_search' }];

const geminiGuard = new ContextGuard({ model: 'gemini-2.5-flash', format: 'gemini' });
const contents = [
  { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
  { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }] },
  { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'weather', response: { output: 'rain' } } }] },
];
const geminiSystem: SystemOf<'gemini', unknown> | null = geminiGuard.guardSources(contents, { system: { parts: [{ text: 'Be brief.' }] } }).system;
geminiGuard.measure(contents, { system: { text: 'Be brief.' } });
const geminiTools: ToolsOf<'gemini'> = [readAttachmentTool({ format: 'gemini' }), { googleSearch: {} }];
const geminiMessage: MessageOf<'gemini'> = { role: 'model', parts: [{ text: 'Rain.', thought: false }] };
const anyFormat: FormatTypes[Format]['note'] = { role: 'system', content: 'note' };
void [anyGuard, chatSystem, chatReadName, strict, claudeSystem, claudeTools, geminiSystem, geminiTools, geminiMessage, anyFormat];
// @ts-expect-error a Chat Completions guard has no separate system
const chatSystemText: string = chatSources.system;
// @ts-expect-error Responses instructions are a string
responsesGuard.measure(items, { system: [{ type: 'input_text', text: 'x' }] });
// @ts-expect-error Gemini's systemInstruction is a Content or a string, not text blocks
geminiGuard.measure(contents, { system: [{ type: 'text', text: 'x' }] });
// @ts-expect-error a Gemini Content has no content field
const badContent: GeminiContent = { role: 'user', content: 'x' };
// @ts-expect-error an Anthropic guard's tools are an array, not a ToolSet
claudeGuard.measure([], { tools: aiTools });

// @ts-expect-error an AI SDK system message has string content
const badSystem: AiSdkSystemMessage = { role: 'system', content: [{ type: 'text', text: 'x' }] };
// @ts-expect-error assistant content is a string or parts, not null
const badAssistant: AiSdkAssistantMessage = { role: 'assistant', content: null };
// @ts-expect-error not an AI SDK role
const badRole: AiSdkModelMessage = { role: 'developer', content: 'x' };

function describe(err: unknown): string {
  const e = err as CtxguardError;
  const code: ErrorCode = e.code;
  const index: number | undefined = e.index;
  return `${e.name} ${code} ${index ?? ''} ${e.message}`;
}
function perMessageBreakdown(m: MessageCount): number {
  return m.text + m.attachments + m.images + m.toolCalls + m.framing;
}

// Whole conversations: clearing by age, summaries ahead of time, restore, the breaker.
const conversational = new ContextGuard({
  model: 'gpt-4o',
  clearToolOutputs: { protectTokens: 30_000, clearAtLeast: 10_000, excludeTools: ['skill'], clearArguments: false },
  ahead: true,
  aheadRatio: 0.6,
  recentTailTokens: 4_000,
  breaker: { failures: 3, cooldownMs: 60_000, cooldownCalls: 10 },
});
async function reload(stored: string): Promise<number> {
  const r = await conversational.prepare(messages, { ahead: true, recentTailTokens: 2_000, summarize: async () => 'S' });
  const cp = r.checkpoint;
  const restored: RestoreResult = conversational.restore(cp ?? JSON.parse(stored));
  conversational.resetBreaker();
  const m = r.metrics;
  const breakerState: 'closed' | 'open' | 'half_open' = m.breaker.state;
  const ahead: 'idle' | 'running' | 'ready' | 'failed' = m.memory.ahead;
  const reason: DegradedReason | null = r.degradedReason;
  void breakerState;
  void ahead;
  void reason;
  const step = r.traces.find((t) => t.operation === 'tool_output_clear');
  return restored.coveredMessages + m.clearing.savedTokens + (step?.prefixInvalidatedTokens ?? 0);
}
new ContextGuard({ model: 'gpt-4o', clearToolOutputs: false });
// @ts-expect-error not a breaker option
new ContextGuard({ breaker: { failure: 3 } });

// The declarations are precise: each of these must be a type error.
// @ts-expect-error text must be a string
countTokens(42);
// @ts-expect-error not a shipped encoding
countTokens('x', { encoding: 'p50k_base' });
// @ts-expect-error unknown option
countTokens('x', { encodnig: 'o200k_base' });
// @ts-expect-error not a format
countMessages(messages, { format: 'google' });
// @ts-expect-error messages must be a list
countMessages(messages[0]);
// @ts-expect-error the budget is read-only
guard.budget = budget;
// @ts-expect-error not a state
const badState: ContextState = 'full';
// @ts-expect-error contextWindow is a number
new ContextGuard({ contextWindow: '128k' });
// @ts-expect-error readAttachment needs an id
readAttachment('text', {});
// @ts-expect-error summarize must be a function
void guard.prepare(messages, { summarize: 'yes' });
// @ts-expect-error version is a function
const badVersion: string = version;

export const used = [
  n, perMessage, kind, exact, sum, window, provider, models, v, model, state, breakdown, last, stats,
  describe, perMessageBreakdown, badState, badVersion, badSystem, badAssistant, badRole, chatSystemText, badContent,
  resolved, chained, classified, retry, guarded, traces, compactedOut, previewOut, readTool, nextOffset, reload,
];
