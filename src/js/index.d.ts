// Public TypeScript surface of the `ctxguard` package. Hand-written, checked by `tsc --noEmit`
// against the tests in tests/js/ (which call every export).

/** Encodings ctxguard counts exactly. */
export type Encoding = 'o200k_base' | 'cl100k_base';
/** Wire formats the adapters read and write: OpenAI Chat Completions, Anthropic Messages, Vercel AI SDK model messages. */
export type Format = 'openai' | 'anthropic' | 'ai-sdk';
/** `exact`: the provider's own tokenizer. `estimate`: a calibrated estimate with a safety margin. */
export type CountKind = 'exact' | 'estimate';

/** Every error ctxguard throws is a real `Error` with `name === 'CtxguardError'` and one of these codes. */
export type ErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_MESSAGES'
  | 'INVALID_MESSAGE'
  | 'INVALID_ROLE'
  | 'INVALID_CONTENT_PART'
  | 'INVALID_TOOL'
  | 'UNKNOWN_ENCODING'
  | 'UNKNOWN_FORMAT'
  | 'UNKNOWN_MODEL'
  | 'INVALID_BUDGET'
  | 'INVALID_TEXT'
  | 'UNKNOWN_ATTACHMENT'
  | 'LATEST_MESSAGE_TOO_LARGE'
  /** A ContextGuard used after `guard.free()`. */
  | 'GUARD_FREED'
  | 'INTERNAL';

export interface CtxguardError extends Error {
  name: 'CtxguardError';
  code: ErrorCode;
  /** Index of the offending message, when the error is about one message. */
  index?: number;
}

/** A JSON value, as messages and tool schemas are. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A chat message in the chosen wire format (OpenAI Chat Completions or Anthropic Messages). Unknown fields are carried through. */
export type WireMessage = { [key: string]: JsonValue | undefined };
/** A tool definition in the chosen wire format. */
export type WireTool = { [key: string]: JsonValue | undefined };

// Vercel AI SDK model messages (`ModelMessage` of the `ai` package, 5 and later; `format: 'ai-sdk'`).
// Structural mirrors: an `ai` `ModelMessage[]` is accepted as is, and `prepare` / `guardSources`
// give back the type they were given. Parts of kinds ctxguard does not interpret are carried through.

/** `providerOptions` on messages and parts: carried through, never counted. */
export type AiSdkProviderOptions = { [provider: string]: { [key: string]: unknown } };
/**
 * Bytes of an image or file: a base64 string or a URL (string or `URL`, which comes back as its
 * `href`); AI SDK 7 tagged file data (`{ type: 'data' | 'url' | 'reference' | 'text', ... }`) and
 * provider references (`{ openai: 'file-...' }`) too. Raw bytes (`Uint8Array`, `Buffer`,
 * `ArrayBuffer`) are part of the AI SDK's type but do not survive JSON: ctxguard rejects them with
 * `INVALID_CONTENT_PART` — pass base64 instead.
 */
export type AiSdkDataContent =
  | string
  | URL
  | Uint8Array
  | ArrayBuffer
  | { type: 'data' | 'url' | 'reference' | 'text' }
  | { [provider: string]: string };
export interface AiSdkTextPart {
  type: 'text';
  text: string;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkImagePart {
  type: 'image';
  image: AiSdkDataContent;
  mediaType?: string | undefined;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkFilePart {
  type: 'file';
  /** A text file's (`text/*`, JSON, XML...) base64 or base64 `data:` URL is read as its text, and previewed. */
  data: AiSdkDataContent;
  mediaType: string;
  filename?: string | undefined;
  providerOptions?: AiSdkProviderOptions | undefined;
}
/** Counted only after the latest user message (providers drop earlier turns' reasoning). */
export interface AiSdkReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerOptions?: AiSdkProviderOptions | undefined;
  providerExecuted?: boolean | undefined;
}
export type AiSdkToolResultOutput =
  | { type: 'text' | 'error-text'; value: string; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'json' | 'error-json'; value: unknown; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'execution-denied'; reason?: string | undefined; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'content'; value: Array<{ type: string }>; providerOptions?: AiSdkProviderOptions | undefined };
export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  /** A `json` output stays a `json` output when ctxguard compacts it (the compact form is JSON). */
  output: AiSdkToolResultOutput;
  providerOptions?: AiSdkProviderOptions | undefined;
}
/** A part of another kind (`tool-approval-request`, `reasoning-file`...): carried through verbatim. */
export interface AiSdkOtherPart {
  type: string;
}
/** ctxguard's markers; only on checkpoint messages, never on model-visible ones. */
export type AiSdkMarkers = { [marker: string]: JsonValue };
export interface AiSdkSystemMessage {
  role: 'system';
  content: string;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkUserMessage {
  role: 'user';
  content: string | Array<AiSdkTextPart | AiSdkImagePart | AiSdkFilePart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkAssistantMessage {
  role: 'assistant';
  content:
    | string
    | Array<AiSdkTextPart | AiSdkFilePart | AiSdkReasoningPart | AiSdkToolCallPart | AiSdkToolResultPart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkToolMessage {
  role: 'tool';
  /** Tool results (and AI SDK 6 `tool-approval-response` parts, carried through). */
  content: Array<AiSdkToolResultPart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
}
/** One message as `generateText` / `streamText` take it in `messages`. */
export type AiSdkModelMessage = AiSdkSystemMessage | AiSdkUserMessage | AiSdkAssistantMessage | AiSdkToolMessage;
/** An AI SDK tool as ctxguard reads it for counting: `inputSchema` a JSON schema or a `jsonSchema()` / `zodSchema()` Schema (not a bare Zod schema). */
export interface AiSdkTool {
  /** AI SDK 7 also allows a function here; it is not JSON, so such a description is not counted. */
  description?: string | ((...args: never[]) => unknown) | undefined;
  inputSchema?: unknown;
  type?: string | undefined;
}
/** AI SDK `tools`: tools by name. */
export type AiSdkToolSet = { [name: string]: AiSdkTool };
/** Any message ctxguard reads. */
export type AnyMessage = WireMessage | AiSdkModelMessage;
/** The `system` option: Anthropic's `system` (string or text blocks), a prompt to prepend (OpenAI), or the AI SDK's `system` / `instructions`. */
export type SystemOption = string | JsonValue[] | AiSdkSystemMessage | AiSdkSystemMessage[];
/** The system messages among `M` (what the AI SDK overloads return as `system`). */
export type SystemMessagesOf<M> = Extract<M, { role: 'system' }>[];

export interface CountTokensOptions {
  encoding?: Encoding;
  /** Pick the encoding from the model name (see `modelInfo`). */
  model?: string;
}

export interface CountMessagesOptions {
  model?: string;
  encoding?: Encoding;
  format?: Format;
  /** Anthropic `system` (string or text blocks); for OpenAI and the AI SDK, a system prompt to prepend. */
  system?: SystemOption;
  tools?: WireTool[] | AiSdkToolSet;
}

export interface MessageCount {
  total: number;
  text: number;
  attachments: number;
  images: number;
  toolCalls: number;
  framing: number;
}

export interface CountMessagesResult {
  total: number;
  /** One entry per internal message (Anthropic tool_result blocks are counted as their own entries). */
  perMessage: number[];
  toolDefinitions: number;
  priming: number;
  exact: boolean;
  kind: CountKind;
  encoding: Encoding;
}

export interface ModelInfo {
  model: string;
  /** Whether the name matched the table (`false`: defaults for unknown models). */
  known: boolean;
  provider: 'openai' | 'anthropic' | 'google' | 'meta' | 'alibaba' | 'deepseek' | 'mistral' | 'other';
  encoding: Encoding;
  kind: CountKind;
  /** Multiplier applied to the base encoding's count for estimated models (1 when exact). */
  estimateFactor: number;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  format: Format;
}

export interface GuardConfig {
  model?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Flat buffer kept free for the answer, capped by `maxOutputTokens`. */
  reservedOutputTokens?: number;
  /** A token cap below the window, for cost; or a cost per request in USD (input side, priced uncached). */
  economicBudget?: number | { usd: number } | null;
  triggerRatio?: number;
  targetRatio?: number;
  format?: Format;
  encoding?: Encoding;
  /** Source guards: token limit for one tool output (default 8000). */
  toolOutputLimit?: number;
  /** Per-tool limits by tool name, overriding `toolOutputLimit`. */
  toolOutputLimits?: { [toolName: string]: number };
  /** Total for all tool outputs of one request (default: half the usable limit). */
  toolOutputTotal?: number;
  /** Total for all attachment previews of one request (default: min(16000, usableLimit / 8)). */
  attachmentBudget?: number;
  /** A host tool that returns a full tool output by call id; compaction markers name it. */
  retrievalTool?: string;
  /** A host secret: summaries are sealed with a tag under it, and only verified ones count as checkpoints. */
  checkpointKey?: string;
  /** Prices overriding the built-in table, USD per million tokens. */
  pricing?: Pricing;
  /** A calibration state saved from `guard.calibration` (validated: `INVALID_OPTIONS`). */
  calibration?: CalibrationState;
  /**
   * `'summary'` (default): a summary replaces older messages, recent user messages are kept
   * verbatim, the current turn is kept whole. `'session_state'`: the SessionState is the only
   * history; mid-run compression also folds the run's earlier steps; `prepare(messages,
   * { sessionState })` starts a run from the last settlement.
   */
  strategy?: 'summary' | 'session_state';
}

/** USD per million tokens. `cacheWrite`: price of writing input to the cache (Anthropic). */
export interface Pricing {
  input: number;
  cachedInput: number;
  output: number;
  cacheWrite?: number | null;
}

/** Where `usedTokens` comes from. */
export type CountSource = 'exact' | 'estimate' | 'calibrated';

export interface UsageObservation {
  /** Input tokens the provider reported (cached included). */
  reported: number;
  reportedCached: number;
  /** ctxguard's uncalibrated count of the same request. */
  estimated: number;
  /** What ctxguard said before this observation. */
  predicted: number;
  /** reported / estimated */
  ratio: number;
  /** (predicted - reported) / reported: positive when ctxguard counted high. */
  error: number;
  outlier: boolean;
}

export interface ModelCalibration {
  observations: number;
  outliers: number;
  ratios: number[];
  pending: number[];
  last: UsageObservation | null;
}

/** Plain JSON to persist and restore (`guard.calibration`). */
export interface CalibrationState {
  version: 1;
  models: { [model: string]: ModelCalibration };
}

export interface CalibrationSummary {
  model: string;
  observations: number;
  outliers: number;
  ratio: number | null;
  spread: number | null;
  confidence: number;
  /** Factor applied to estimates (1 when not applied). */
  correction: number;
  applied: boolean;
  last: UsageObservation | null;
}

export interface CostEstimate {
  currency: 'USD';
  inputTokens: number;
  cachedInputTokens: number;
  uncachedInputTokens: number;
  outputTokens: number;
  cachedInputUsd: number;
  uncachedInputUsd: number;
  outputUsd: number;
  totalUsd: number;
  pricing: Pricing;
  /** Date of the built-in table; null when the guard's `pricing` was used. */
  pricesAsOf: string | null;
}

/** Provider usage: OpenAI, Anthropic or Gemini shape; other fields are ignored. */
export interface ReportedUsage {
  prompt_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  input_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  promptTokenCount?: number;
  cachedContentTokenCount?: number | null;
  [field: string]: JsonValue | undefined;
}

export interface ObserveUsageArgs {
  messages: AnyMessage[];
  system?: SystemOption;
  tools?: WireTool[] | AiSdkToolSet;
  usage: ReportedUsage;
}

export interface Budget {
  contextWindow: number;
  maxOutputTokens: number;
  reservedOutputTokens: number;
  economicBudget: number | null;
  usableLimit: number;
  triggerRatio: number;
  targetRatio: number;
  triggerLimit: number;
  targetLimit: number;
}

export type ContextState = 'ok' | 'near_trigger' | 'over_trigger' | 'over_limit';

export interface SourceBreakdown {
  system: number;
  toolDefinitions: number;
  user: number;
  assistant: number;
  toolOutputs: number;
  attachments: number;
  images: number;
  summary: number;
  /** Per-message framing and reply priming. */
  framing: number;
}

export interface CompactionRecord {
  beforeTokens: number;
  afterTokens: number;
  tokensSaved: number;
  removedItems: number;
  durationMs: number;
  status: 'completed' | 'fallback';
  failureReason: string | null;
  attempts: number;
}

export interface ContextMetrics {
  model: string;
  encoding: Encoding;
  kind: CountKind;
  contextWindow: number;
  reservedOutputTokens: number;
  usableLimit: number;
  triggerLimit: number;
  targetLimit: number;
  usedTokens: number;
  remainingTokens: number;
  /** remainingTokens / usableLimit, 0..1. */
  remainingRatio: number;
  /** usedTokens / usableLimit (may exceed 1). */
  usedRatio: number;
  state: ContextState;
  breakdown: SourceBreakdown;
  messageCount: number;
  compacted: boolean;
  lastCompaction: CompactionRecord | null;
  countSource: CountSource;
  calibration: CalibrationSummary | null;
  /** Estimated cost of the next request; null when the model has no price. */
  cost: CostEstimate | null;
}

export interface MeasureOptions {
  /** In the guard's format: an array (OpenAI, Anthropic) or an AI SDK ToolSet. */
  tools?: WireTool[] | AiSdkToolSet;
  system?: SystemOption;
}

/** One trace schema for every protection. Fields that do not apply to the operation are `null`. */
export interface ProtectionTrace {
  operation: 'tool_output' | 'attachment_preview' | 'summary_compact';
  status: 'applied' | 'noop' | 'in_progress' | 'completed' | 'fallback';
  durationMs: number;
  beforeTokens: number;
  afterTokens: number;
  tokensSaved: number;
  messagesTruncated: number | null;
  emergency: boolean | null;
  attachmentBlocks: number | null;
  attachmentBlocksTruncated: number | null;
  removedHistoryItems: number | null;
  failureReason: string | null;
  /** summary_compact: the cache-aware decision when the economic budget triggered it (`noop` = deferred). */
  cacheDecision: CacheDecision | null;
}

/** Continue on the provider's cached prefix, or compact now (economic trigger only). */
export interface CacheDecision {
  operation: 'cache_decision';
  choice: 'continue' | 'compact';
  reason: 'physical_window' | 'over_limit' | 'cheaper_to_continue' | 'cheaper_to_compact';
  /** Estimated input cost over the horizon of continuing (compacting when the hard limit forces it). */
  continueUsd: number;
  /** Estimated input cost over the horizon of compacting now (summary call included). */
  compactUsd: number;
  turnsUntilForced: number;
  prefixTokens: number;
  cachedTokens: number;
  compactedTokens: number;
  summaryInputTokens: number;
  summaryOutputTokens: number;
  growthPerTurn: number;
  hardLimit: number;
  physicalTrigger: number;
  horizonTurns: number;
}

export interface GuardSourcesOptions extends MeasureOptions {
  /** The emergency pass: every tool-output limit quartered; compacted outputs may be compacted again. */
  emergency?: boolean;
  /** Called once per trace; an exception it throws is ignored. */
  onTrace?: (trace: ProtectionTrace) => void;
}

export interface GuardSourcesResult<M = WireMessage, S = string | JsonValue[]> {
  /** The model-visible messages, in the guard's format. */
  messages: M[];
  /** Anthropic: the request's `system`; AI SDK: the system messages (for `system` / `instructions`), `null` when none; `null` for OpenAI. */
  system: S | null;
  metrics: ContextMetrics;
  traces: ProtectionTrace[];
}

export interface CompactResult {
  /** The compacted text, or the input unchanged when it fits (`compacted: false`). */
  text: string;
  compacted: boolean;
  originalTokens: number;
  tokens: number;
}

export interface CompactToolOutputOptions {
  /** Token limit, marker line included (default 8000). */
  limit?: number;
  encoding?: Encoding;
  model?: string;
  emergency?: boolean;
  retrievalTool?: string;
  callId?: string;
}

export interface PreviewAttachmentOptions {
  /** Token limit of the preview, footer included (default 16000). */
  limit?: number;
  id?: string;
  name?: string;
  type?: string;
  encoding?: Encoding;
  model?: string;
}

export interface ReadAttachmentOptions {
  id: string;
  /** Token offset (default 0). */
  offset?: number;
  /** Tokens per page (default 2000, at most 8000). */
  limit?: number;
  encoding?: Encoding;
  model?: string;
}

export interface AttachmentPage {
  id: string;
  text: string;
  offset: number;
  /** Offset of the next page; `null` at the end. */
  nextOffset: number | null;
  totalTokens: number;
}

/** The structured summary (seed "SessionState"): the same schema serves compaction and settlement. */
export interface SessionState {
  summary: string;
  key_facts?: string[];
  decisions?: string[];
  plan?: { status: string; steps: { description: string; status: string }[] } | null;
  open_questions?: string[];
}

/** What the host's summarizer is given. */
export interface SummarizeRequest<M = WireMessage, S = string | JsonValue[]> {
  /** The summary source, in the guard's wire format. */
  messages: M[];
  /** Anthropic and AI SDK: earlier summaries among the source, as `system`; otherwise `null`. */
  system: S | null;
  format: Format;
  /** Instructions for the summarizing model (use them as its system prompt). */
  instructions: string;
  /** JSON schema of SessionState (for structured outputs). */
  schema: { [key: string]: JsonValue };
  /** Token limit for the answer; a longer answer counts as a failure. */
  maxTokens: number;
  /** 1, 2 or 3. */
  attempt: number;
  /** Aborted on timeout or when the caller's signal aborts: pass it to fetch. */
  signal: AbortSignal;
}

/** The host's summarizer: plain text or a SessionState (or JSON text of one). */
export type Summarize<M = WireMessage, S = string | JsonValue[]> = (
  request: SummarizeRequest<M, S>,
) => Promise<string | SessionState> | string | SessionState;

export interface ProgressEvent {
  operation: 'summary_compact';
  status: 'in_progress';
  /** Since the compaction (or settlement) started. */
  elapsedMs: number;
  /** The attempt running; during the pause before a retry, the attempt it waits for. */
  attempt: number;
}

export type DegradedReason = 'no_callback' | 'timeout' | 'callback_error' | 'invalid_output' | 'empty_output' | 'over_budget' | 'aborted';

export interface PrepareOptions<M = WireMessage, S = string | JsonValue[]> extends MeasureOptions {
  summarize?: Summarize<M, S>;
  onProgress?: (event: ProgressEvent) => void;
  onTrace?: (trace: ProtectionTrace) => void;
  /** Receives `[SummaryCompact] ...` lines. */
  logger?: (line: string) => void;
  signal?: AbortSignal;
  /** Compact even under the trigger (after the provider reported a context overflow). */
  force?: boolean;
  /** Transient instructions appended to the model input after compaction; never in the checkpoint. */
  guidance?: string;
  /** Per summarizer attempt (default 60000). */
  timeoutMs?: number;
  /** Heartbeat period while waiting, also during the pauses between attempts (default 1000; 0 = none). */
  heartbeatMs?: number;
  /**
   * Pause before the next attempt after one threw, rejected or timed out, in ms (default 500;
   * doubled for the third attempt; each pause a random 50–100 % of that; 0 = none). An answer that
   * failed validation is asked again at once. `signal` aborting during a pause ends the attempts.
   * Delays longer than 2^31 - 1 ms (about 24.8 days; `timeoutMs` too) are that long.
   */
  retryDelayMs?: number;
  /** Token limit for the summary (default min(4096, targetLimit / 4)). */
  summaryMaxTokens?: number;
  /** Recent user messages kept verbatim next to the summary, in tokens (default 8000, at most 4 messages). */
  retainUserTokens?: number;
  /** Strategy `'session_state'` only: start the run from this SessionState (e.g. the last `settle` result's). */
  sessionState?: SessionState;
}

export interface Checkpoint<M = WireMessage, S = string | JsonValue[]> {
  /** The self-contained chain to persist: system, summary (or evidence note), retained user messages, the current turn. Carries ctxguard's markers. */
  messages: M[];
  system: S | null;
}

export interface PrepareResult<M = WireMessage, S = string | JsonValue[]> {
  /** The model-visible messages to send now (no ctxguard metadata). */
  messages: M[];
  /** Anthropic: the request's `system`; AI SDK: the system messages (for `system` / `instructions`), `null` when none; `null` for OpenAI. */
  system: S | null;
  metrics: ContextMetrics;
  traces: ProtectionTrace[];
  compaction: CompactionRecord | null;
  /** Persist this when it is not null. */
  checkpoint: Checkpoint<M, S> | null;
  degraded: boolean;
  degradedReason: DegradedReason | null;
  /** Messages the emergency layer dropped. */
  droppedMessages: number;
  /** The SessionState of this compaction (a text answer is its `summary`; the fallback's evidence likewise); `null` without one. */
  sessionState: SessionState | null;
  /** The cache-aware decision when the economic budget triggered compaction; `null` otherwise. */
  cacheDecision: CacheDecision | null;
}

export interface SettleOptions<M = WireMessage, S = string | JsonValue[]> extends MeasureOptions {
  /** The conversation's own model; asked for a Settlement (see `Settlement` minus the bookkeeping fields). */
  summarize?: Summarize<M, S> | ((request: SummarizeRequest<M, S>) => Promise<JsonValue> | JsonValue);
  onProgress?: (event: ProgressEvent) => void;
  logger?: (line: string) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
  heartbeatMs?: number;
  /** As `PrepareOptions.retryDelayMs`. */
  retryDelayMs?: number;
}

/** End-of-run settlement. Data for the host: never shown as an assistant message. */
export interface Settlement {
  sessionState: SessionState;
  memoryEntries: string[];
  reflections: string[];
  learnings: string[];
  /** The SessionState rendered as the next run's history: use it as one system message before the new user message. */
  rendered: string;
  degraded: boolean;
  degradedReason: DegradedReason | null;
  attempts: number;
}

export interface CacheStats {
  entries: number;
  hits: number;
  misses: number;
}

/** What a failed provider call means for the conversation. */
export type ProviderErrorKind = 'context_overflow' | 'payload_too_large' | 'rate_limit' | 'other';

/**
 * The fields `classifyProviderError` reads from an object. An OpenAI or Anthropic SDK error can be
 * passed as is; other fields are ignored.
 */
export interface ProviderErrorInput {
  /** HTTP status. Also read from `statusCode` / `status_code`, or from a status inside the body. */
  status?: number | string | null;
  statusCode?: number | string | null;
  status_code?: number | string | null;
  message?: string | null;
  /** Provider error code, e.g. `context_length_exceeded`, `rate_limit_exceeded`, `1261`. */
  code?: string | number | null;
  /** The parsed JSON error body, or its raw text. */
  body?: unknown;
  /** What the OpenAI and Anthropic SDKs call the parsed body. */
  error?: unknown;
}

export interface ProviderErrorClassification {
  kind: ProviderErrorKind;
  /** `true` exactly when `kind` is `'context_overflow'`: prepare again with `force: true`, then retry once. */
  compactAndRetry: boolean;
  /** The rule that matched: `marker:<id>` (a phrase or code in the error), `status:429`, `status:413`, or `none`. Stable. */
  reason: `marker:${string}` | 'status:413' | 'status:429' | 'none';
}

export class ContextGuard {
  constructor(config?: GuardConfig);
  readonly budget: Budget;
  readonly model: ModelInfo;
  /** Counts the messages (cached per message content) and returns the metrics snapshot. Never modifies `messages`. */
  measure(messages: AnyMessage[], options?: MeasureOptions): ContextMetrics;
  readonly cacheStats: CacheStats;
  /**
   * The whole pipeline before a model call: source guards, summary compaction through
   * `summarize` when over the trigger (or `force`), the emergency layer, tool-pair sanitation.
   * Rejects only on bad input; a failing summarizer gives `degraded: true`.
   */
  prepare<M extends AiSdkModelMessage>(
    messages: M[],
    options?: PrepareOptions<M, SystemMessagesOf<M>>,
  ): Promise<PrepareResult<M, SystemMessagesOf<M>>>;
  prepare(messages: WireMessage[], options?: PrepareOptions): Promise<PrepareResult>;
  /**
   * End-of-run settlement: asks `summarize` for `{ session_state, memory_entries, reflections,
   * learnings }` (3 attempts, then a mechanical SessionState with `degraded: true`).
   */
  settle<M extends AiSdkModelMessage>(messages: M[], options?: SettleOptions<M, SystemMessagesOf<M>>): Promise<Settlement>;
  settle(messages: WireMessage[], options?: SettleOptions): Promise<Settlement>;
  /** Source guards only (tool outputs, attachments) over a copy of `messages`. */
  guardSources<M extends AiSdkModelMessage>(messages: M[], options?: GuardSourcesOptions): GuardSourcesResult<M, SystemMessagesOf<M>>;
  guardSources(messages: WireMessage[], options?: GuardSourcesOptions): GuardSourcesResult;
  /** Learn from the provider's reported usage for the request that was sent. */
  observeUsage(args: ObserveUsageArgs): CalibrationSummary | null;
  /** The calibration state (plain JSON to persist); assign a saved one to restore it. */
  get calibration(): CalibrationState;
  set calibration(state: CalibrationState);
  /** Releases the guard's WebAssembly memory; later calls throw (or reject with) `GUARD_FREED`. Safe to call twice. */
  free(): void;
}

export function countTokens(text: string, options?: CountTokensOptions): number;
export function countMessages(messages: AnyMessage[], options?: CountMessagesOptions): CountMessagesResult;
export function modelInfo(model: string): ModelInfo;
/** The list of models in the built-in table. */
export function knownModels(): ModelInfo[];
/** Compact one tool output into its stable compact form (head, marker line, tail; JSON stays JSON). */
export function compactToolOutput(text: string, options?: CompactToolOutputOptions): CompactResult;
/** A bounded preview of one attachment's text. */
export function previewAttachment(text: string, options?: PreviewAttachmentOptions): CompactResult;
/**
 * The `read_attachment` tool definition for the model, in OpenAI (default) or Anthropic shape, or
 * for the AI SDK a ToolSet entry `{ read_attachment: { description, inputSchema } }` (wrap it:
 * `tool({ description, inputSchema: jsonSchema(inputSchema), execute })`).
 */
export function readAttachmentTool(options: { format: 'ai-sdk' }): { read_attachment: { description: string; inputSchema: { [key: string]: JsonValue } } };
export function readAttachmentTool(options?: { format?: Format }): WireTool;
/** One page of an attachment's full text. `source` maps attachment ids to their text (object or Map), or is the text itself. */
export function readAttachment(
  source: string | { [id: string]: string } | Map<string, string>,
  options: ReadAttachmentOptions,
): AttachmentPage;
/**
 * What a failed provider call means: context overflow (compact and retry), payload too large,
 * rate limit, or other. Takes anything — a `ProviderErrorInput`, an SDK error, a raw body string —
 * and never throws: unreadable input is `'other'`.
 */
export function classifyProviderError(error: unknown): ProviderErrorClassification;
/** A model input as pre-model hooks pass it along: the messages plus whatever else the host carries. */
export interface ModelInput {
  messages: WireMessage[];
  system?: string | JsonValue[] | null;
  [key: string]: unknown;
}

/** A pre-model hook: returns the next model input, or nothing to keep the one it was given. */
export type PreModelHook = (input: ModelInput) => ModelInput | undefined | void | Promise<ModelInput | undefined | void>;

/**
 * Compose hooks in order; each sees the previous one's model input. Throws `INVALID_OPTIONS`
 * for a non-function; the chained hook rejects with whatever a hook throws.
 */
export function chainPreModelHooks(hooks: PreModelHook[]): (input: ModelInput) => Promise<ModelInput>;
/** One stored turn of a conversation. */
export interface StoredTurn {
  id?: string | number | null;
  /** The turn's persisted message chain (for a compacting turn: the `checkpoint` of its `prepare`). */
  messages: AnyMessage[];
  /** Anthropic and AI SDK: the turn's `system`, when it has one. */
  system?: SystemOption | null;
  status?: string | null;
}

export interface ResolveHistoryOptions {
  /** Turns after the checkpoint to keep (the latest); never cuts into the checkpoint chain. */
  limit?: number;
  /** Resolve the history before this message id (edit / fork). */
  beforeMessageId?: string;
  format?: Format;
  /** The guard's `checkpointKey`, when summaries are sealed with one. */
  checkpointKey?: string;
}

export interface ResolvedHistory {
  messages: WireMessage[];
  /** Anthropic: the merged `system`; AI SDK: the system messages; `null` for OpenAI. */
  system: string | JsonValue[] | null;
  /** Index of the turn holding the checkpoint, or `null`. */
  checkpointIndex: number | null;
  fromCheckpoint: boolean;
}

/**
 * The history to continue from: the latest checkpoint's chain plus every later turn in full.
 * A checkpoint is a sealed `[ctxguard:summary]` block in a system message (verified with
 * `checkpointKey` when given); text a user or a tool writes never counts.
 */
export function resolveHistory(turns: StoredTurn[], options?: ResolveHistoryOptions): ResolvedHistory;
/** The crate version. */
export function version(): string;

/** `memoryStats()`: diagnostics for long sessions. */
export interface MemoryStats {
  /** Size of the WebAssembly linear memory in bytes (grows, never shrinks: a high-water mark). */
  wasmBytes: number;
}
export function memoryStats(): MemoryStats;
