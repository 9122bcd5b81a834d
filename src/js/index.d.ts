// Public TypeScript surface of the `ctxguard` package; each format's message, system and tool
// types are in formats.d.ts (re-exported here). Hand-written, checked by `tsc --noEmit`: tests/ts/
// uses every export, and tests/ts/sdk/ sends each format's messages from its official SDK through
// ctxguard and back into that SDK's own request types.

/** Encodings ctxguard counts exactly. */
export type Encoding = 'o200k_base' | 'cl100k_base' | 'gemma3' | 'llama3' | 'qwen2' | 'deepseek-v3' | 'mistral-tekken' | 'mistral-spm-v3' | 'mistral-spm-v7';
/** The vocabulary files the package ships (`loadVocabulary`; docs/vocabularies.md). */
export type VocabularyName = 'llama3' | 'qwen3' | 'deepseek-v3' | 'mistral-tekken' | 'mistral-spm-v3' | 'mistral-spm-v7';
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
  /** Counting with a loadable encoding (`llama3`, `qwen2`, `deepseek-v3`, `mistral-tekken`, `mistral-spm-v3`, `mistral-spm-v7`) named before `loadVocabulary`. */
  | 'VOCABULARY_NOT_LOADED'
  /** `loadVocabulary` of a name that is no vocabulary, alias or model with one. */
  | 'UNKNOWN_VOCABULARY'
  /** Vocabulary bytes that are not a vocabulary, or are damaged. */
  | 'INVALID_VOCABULARY'
  /** A tokenizer file ctxguard cannot count exactly (the message names what is unsupported). */
  | 'UNSUPPORTED_VOCABULARY'
  /** Another vocabulary of the same encoding is already loaded in this module. */
  | 'VOCABULARY_CONFLICT'
  /** The package's vocabulary file could not be read or fetched. */
  | 'VOCABULARY_UNAVAILABLE'
  /** A browser or worker entry could not fetch or instantiate its `.wasm`: the import rejects with it, and the message says what to do. */
  | 'WASM_UNAVAILABLE'
  | 'INTERNAL';

export interface CtxguardError extends Error {
  name: 'CtxguardError';
  code: ErrorCode;
  /** Index of the offending message, when the error is about one message. */
  index?: number;
}

// The formats, and the messages, `system` and tools of each: formats.d.ts.
export * from './formats.js';
import type {
  AnyMessage,
  Format,
  JsonValue,
  MessageOf,
  Messages,
  ReadAttachmentTool,
  ResultMessage,
  SystemIn,
  SystemOf,
  SystemOption,
  ToolsOf,
} from './formats.js';

export interface CountTokensOptions {
  encoding?: Encoding;
  /** Pick the encoding from the model name (see `modelInfo`). */
  model?: string;
}

/** `tools` and `system` of a request in format `F` (counted with it). */
export interface MeasureOptions<F extends Format = Format> {
  tools?: ToolsOf<F>;
  system?: SystemIn<F>;
}

export interface CountMessagesOptions<F extends Format = Format> extends MeasureOptions<F> {
  model?: string;
  encoding?: Encoding;
  /** Default: `'anthropic'` for Claude models named directly (`claude-...`), else `'openai'`. */
  format?: F;
  /** Also return `places`: where each counted message sits in the input. Default `false`. */
  places?: boolean;
}

/** Where a counted message sits in the caller's input (`countMessages(..., { places: true })`). */
export interface MessagePlace {
  /** Its index in `messages`, or `'system'` for the `system` option. */
  message: number | 'system';
  /**
   * The indices of the parts it holds in that message's content (a tool result split out of
   * its message, the rest of that message); `null` when it is the whole message. For the AI
   * SDK's `system` option as an array: `[k]`, the system message's index in it.
   */
  parts: number[] | null;
  /** The role ctxguard counts it with. */
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** A tool result's: the id of the call ctxguard pairs it with (for an AI SDK approval response, the call its approval was requested for); else `null`. */
  callId: string | null;
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
  /** With `places: true` only: one entry per `perMessage` entry, in the same order. */
  places?: MessagePlace[];
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
  /** Claude's preserved thinking (Fable and Mythos 5.x, Opus, Sonnet and Haiku 5.5): thinking blocks are bound to the request that produced them, and `prepare` sends none whose prefix changed. */
  preservedThinking: boolean;
  /** The vocabulary that counts this model exactly (`loadVocabulary(name)`); `null` when it counts with a built-in encoding or has no public tokenizer. */
  vocabulary: VocabularyName | null;
}

/** What `loadVocabulary` loaded. */
export interface LoadedVocabulary {
  name: string;
  /** The encoding it counts as (`countTokens(text, { encoding })`, `modelInfo(model).encoding`). */
  encoding: Encoding;
  /** Ordinary tokens. */
  tokens: number;
  /** Added (special and control) tokens. */
  addedTokens: number;
  /** Whether added tokens found in text count as one token each (the Hugging Face families; not Tekken). */
  matchesAddedTokens: boolean;
  /** Whether text is put in NFC first (Qwen). */
  nfc: boolean;
  /** Where the data came from. */
  source: string;
  /** `false` when it was already loaded. */
  loadedNow: boolean;
  memoryBytes: number;
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
  /** Default: `'anthropic'` for Claude models named directly (`claude-...`), else `'openai'`. A literal types the guard (`ContextGuard<F>`). */
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
  /**
   * Tool outputs by age: the newest stay under their limit within a protected budget, older ones
   * are compacted, the oldest cleared to a stub that names the call and the way back — in steps,
   * so the prompt's prefix stays the same between steps. `false` turns it off; `true` (default)
   * uses the defaults.
   */
  clearToolOutputs?: boolean | ClearToolOutputs;
  /** Make summaries ahead of time, in the background (default for `prepare`'s `ahead`; default false). */
  ahead?: boolean;
  /** The ahead threshold as a share of the usable limit, below `triggerRatio` (default 0.65, or 0.8 × a trigger under 0.8125; `INVALID_OPTIONS` at or over the trigger). */
  aheadRatio?: number;
  /** The recent tail a compaction keeps verbatim, in tokens (default: half the target limit). */
  recentTailTokens?: number;
  /** The summarizer's circuit breaker. */
  breaker?: BreakerConfig;
  /**
   * When the guard changes what it sent before (clearing steps, summaries): `'needed'` (default)
   * only when the request would not fit under the usable limit, or over the trigger when the
   * provider's cache is cold anyway (no call within its lifetime); `'trigger'` whenever the
   * request passes the trigger or its tool outputs their total (the rule before edits were priced).
   */
  edits?: 'needed' | 'trigger';
  /** Overrides of the provider's prompt-cache figures the edit planner prices edits with. */
  cache?: CacheConfig;
}

/** `cache`: multiples of the plain input price, the cache's lifetime, its minimum prefix. */
export interface CacheConfig {
  /** A token read from the cache (Anthropic 0.1, GPT-4o 0.5...). */
  read?: number;
  /** A token written to the cache (Anthropic 1.25 for the 5-minute cache, 2 for the 1-hour one). */
  write?: number;
  /** How long an entry lives after its last use, in ms (default 300000). */
  ttlMs?: number;
  /** Prefixes shorter than this are not cached. */
  minTokens?: number;
}

/** `clearToolOutputs` (names after Anthropic's context editing). */
export interface ClearToolOutputs {
  /** The newest tool outputs up to this many tokens are kept (default min(40000, 30 % of the usable limit)). */
  protectTokens?: number;
  /** A clearing step is taken only when it saves at least this many tokens (default min(20000, protectTokens / 2)). */
  clearAtLeast?: number;
  /** Tools whose outputs are never compacted or cleared by age. */
  excludeTools?: string[];
  /** Also clear the call's arguments (`{}`); the stub keeps the key arguments. Default false. */
  clearArguments?: boolean;
}

/** The summarizer's circuit breaker. */
export interface BreakerConfig {
  /** Consecutive failed compactions that open it (default 3; 0 = never). */
  failures?: number;
  /** It half-opens after this many ms (default 300000)... */
  cooldownMs?: number;
  /** ...or after this many `prepare` calls, whichever comes first (default: no call limit). */
  cooldownCalls?: number;
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
  /** An overflow's floor under the correction (`observeOverflow`): its ratio, and the observation count when it was set. */
  floor?: { ratio: number; at: number } | null;
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
  /** An overflow's floor under the correction while it is in force. */
  floor: number | null;
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
  /** Anthropic's compaction and server-tool steps: the first one is compared with the request sent. */
  iterations?: Array<{ [field: string]: JsonValue }> | null;
  promptTokenCount?: number;
  cachedContentTokenCount?: number | null;
  [field: string]: JsonValue | undefined;
}

export interface ObserveUsageArgs<F extends Format = Format, M = MessageOf<F>> extends MeasureOptions<F> {
  /** The request that was sent. */
  messages: Messages<F, M>;
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
  /** The summary, or the mechanical fallback's evidence note in its place. */
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
  /** The largest `max_tokens` the next request can ask for: min(budget.maxOutputTokens, contextWindow − usedTokens), 0 when over. */
  availableOutputTokens: number;
  /** Tool outputs cleared or compacted by age in this request (counts are zeros for `measure`), and the settings in force. */
  clearing: ClearingMetrics;
  /** What the guard remembers: summaries, and the one made ahead of time. */
  memory: MemoryMetrics;
  breaker: BreakerMetrics;
  /** The vocabulary that would make these counts exact while this guard counts the model's estimate (`loadVocabulary(name)`, then a new guard); `null` otherwise. */
  missingVocabulary: VocabularyName | null;
  /** The edit planner's view of the next request: when the guard edits, what the cache bills, what it is expected to serve. */
  edits: EditMetrics;
}

export interface EditMetrics {
  when: 'needed' | 'trigger';
  /** The provider's prompt-cache figures in force (multiples of the input price). */
  cache: CachePrices | null;
  /** Whether the provider's cache still holds the last request sent. */
  warm: boolean;
  /** The size over which this call edits what was sent before. */
  threshold: number;
  /** Tokens identical to the last request sent, as the cache serves them (0 when cold). */
  expectedCachedTokens: number;
  /** Claude's preserved thinking (`null` for other models). */
  thinking: ThinkingReport | null;
}

export interface CachePrices {
  read: number;
  write: number;
  ttlMs: number;
  minTokens: number;
  step: number;
}

export interface ThinkingReport {
  /** Assistant turns sent with their thinking. */
  kept: number;
  /** Assistant turns sent without it (their prefix changed since they were produced). */
  dropped: number;
  /** Of which dropped by this call. */
  newlyDropped: number;
  /** Tokens of the dropped blocks. */
  droppedTokens: number;
  /** Whether the latest assistant turn keeps its thinking. */
  latestKept: boolean;
}

export interface ClearingMetrics {
  /** Outputs cleared to a stub. */
  cleared: number;
  /** Outputs compacted to a quarter by age. */
  compacted: number;
  /** Tokens the two saved (not part of `usedTokens`). */
  savedTokens: number;
  /** The protected budget in force (`clearToolOutputs.protectTokens` or its default; 0 when clearing is off). */
  protectTokens: number;
  /** The minimum saving of a clearing step in force (`clearAtLeast` or its default). */
  clearAtLeast: number;
}

export interface MemoryMetrics {
  /** Summaries remembered (made, or restored from a checkpoint). */
  summaries: number;
  /** Messages of the conversation the summary applied in the last call replaces (0: none). */
  coveredMessages: number;
  ahead: 'idle' | 'running' | 'ready' | 'failed';
}

export interface BreakerMetrics {
  state: 'closed' | 'open' | 'half_open';
  /** Consecutive failed compactions. */
  failures: number;
  /** While open: ms until it half-opens (as of the last `prepare`). */
  closesInMs: number | null;
  /** While open with `cooldownCalls`: `prepare` calls until it half-opens. */
  closesAfterCalls: number | null;
}

/** What `guard.restore(checkpoint)` did. */
export interface RestoreResult {
  restored: boolean;
  /** Messages of the conversation its summary replaces. */
  coveredMessages: number;
  /** Why not: `'no_summary'` (no sealed summary verifying under the guard's key), `'no_covers'` (a summary sealed by an older version: pass the chain itself). */
  reason: 'no_summary' | 'no_covers' | null;
}

/** One trace schema for every protection. Fields that do not apply to the operation are `null`. */
export interface ProtectionTrace {
  /** `message_dropped` (prepare): a message of the input that is not sent, or sent without some of its tool calls. */
  operation: 'tool_output' | 'tool_output_clear' | 'attachment_preview' | 'summary_compact' | 'thinking_drop' | 'message_dropped';
  status: 'applied' | 'noop' | 'in_progress' | 'completed' | 'fallback';
  durationMs: number;
  /** tool_output_clear: the tokens of the outputs cleared or compacted by age, before and after. */
  beforeTokens: number;
  afterTokens: number;
  tokensSaved: number;
  messagesTruncated: number | null;
  /** tool_output: outputs cleared by age; tool_output_clear: those this step cleared. */
  messagesCleared: number | null;
  /** tool_output_clear: tokens of the model input from the first message the step changed to the end (what a prompt cache can no longer serve). */
  prefixInvalidatedTokens: number | null;
  /** tool_output_clear, summary_compact: what re-billing the invalidated tokens costs over reading them from the cache, in input-token equivalents. */
  editCost: number | null;
  /** thinking_drop: assistant turns whose thinking this call dropped. */
  thinkingDropped: number | null;
  emergency: boolean | null;
  attachmentBlocks: number | null;
  attachmentBlocksTruncated: number | null;
  removedHistoryItems: number | null;
  /** summary_compact: a summary made ahead of time (`in_progress` started, `completed`/`fallback` ended, `applied` used). */
  ahead: boolean | null;
  /** summary_compact made ahead of time: the summarizer's attempts. */
  attempts: number | null;
  /** summary_compact: a `DegradedReason`; `'checkpoint_mismatch'` (status `noop`) when a restored checkpoint covers another conversation. */
  failureReason: string | null;
  /** summary_compact: the cache-aware decision when the economic budget triggered it (`noop` = deferred). */
  cacheDecision: CacheDecision | null;
  /** message_dropped: its index in the `messages` passed (for a tool result that is a block or part of a message, that message's). */
  messageIndex: number | null;
  /** message_dropped: why. */
  reason: DropReason | null;
  /** message_dropped: the whole message (or tool-result block) is left out; `false`: only the calls in `callIds`. */
  removed: boolean | null;
  /** message_dropped: the ids of the calls removed, or of the call a removed result answers. */
  callIds: string[] | null;
}

/**
 * Why `prepare` leaves a message of the input out (a `message_dropped` trace): providers reject
 * a tool result without its call (`orphan_tool_result`) and a call without its result
 * (`unanswered_tool_call`: the call goes, the message too when nothing else is left of it); an
 * assistant message with neither content nor calls (`empty_message`, e.g. half-streamed) is
 * never sent; `broken_bundle`: a Responses reasoning item or Gemini signed calls that lost a
 * member of their bundle.
 */
export type DropReason = 'orphan_tool_result' | 'unanswered_tool_call' | 'empty_message' | 'broken_bundle';

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

export interface GuardSourcesOptions<F extends Format = Format> extends MeasureOptions<F> {
  /** The emergency pass: every tool-output limit quartered; compacted outputs may be compacted again. */
  emergency?: boolean;
  /** Called once per trace; an exception it throws is ignored. */
  onTrace?: (trace: ProtectionTrace) => void;
}

/**
 * `M`: the messages' type, `S`: the system's (a guard gives `ResultMessage<F, M>` and
 * `SystemOf<F, M>` for its format `F`).
 */
export interface GuardSourcesResult<M = AnyMessage, S = SystemOf<Format, M>> {
  /** The model-visible messages, in the guard's format. */
  messages: M[];
  /** The request's system (`SystemOf`); `null` when there is none, and always for OpenAI Chat Completions. */
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

/** `guard.sourceLimits`: what each source-guard limit is for this guard (docs/sources.md). */
export interface SourceLimits {
  toolOutputLimit: number;
  toolOutputTotal: number;
  attachmentBudget: number;
  /** 0 when clearing by age is off. */
  protectTokens: number;
  /** 0 when clearing by age is off. */
  clearAtLeast: number;
}

export interface ListAttachmentsOptions<F extends Format = Format> {
  /** Default: as for `countMessages`. */
  format?: F;
  /** The request's system (`SystemIn`): its attachments come first, with `message: null`. */
  system?: SystemIn<F>;
  /** The encoding `tokens` is counted in (or the model's). */
  model?: string;
  encoding?: Encoding;
}

/** One attachment of a request, as the source guards find it (`listAttachments`). */
export interface ListedAttachment {
  /** The id `readAttachment` and the model's `read_attachment` take; for a preview, the one its footer names. */
  id: string;
  name: string | null;
  mediaType: string | null;
  /** The text as the request carries it: the whole text, or the preview. */
  text: string;
  /** Tokens of `text` in the counting encoding. */
  tokens: number;
  chars: number;
  /** Index in `messages`; `null` for the `system` option. */
  message: number | null;
  /** Index of the part (or of the tool result holding it) in the message's content; `null` for string content. */
  part: number | null;
  form: 'attachment block' | 'file part' | 'document block';
  /** For a preview ctxguard wrote: the token offset its footer tells the model to read on from. */
  offset: number | null;
}

/** The structured summary: the same schema serves compaction (strategy `session_state`) and settlement. */
export interface SessionState {
  summary: string;
  key_facts?: string[];
  decisions?: string[];
  plan?: { status: string; steps: { description: string; status: string }[] } | null;
  open_questions?: string[];
}

/** What the host's summarizer is given. */
export interface SummarizeRequest<M = AnyMessage, S = SystemOf<Format, M>> {
  /** The summary source, in the guard's wire format. */
  messages: M[];
  /** Formats with a separate system (all but OpenAI Chat Completions): earlier summaries among the source; otherwise `null`. */
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
export type Summarize<M = AnyMessage, S = SystemOf<Format, M>> = (
  request: SummarizeRequest<M, S>,
) => Promise<string | SessionState> | string | SessionState;

export interface ProgressEvent {
  operation: 'summary_compact';
  status: 'in_progress';
  /** Since the compaction (or settlement) started. */
  elapsedMs: number;
  /** The attempt running; during the pause before a retry, the attempt it waits for. */
  attempt: number;
  /** A summary made ahead of time, in the background. */
  ahead?: true;
}

/** `breaker_open`: the circuit breaker is open, the summarizer was not asked. */
export type DegradedReason = 'no_callback' | 'timeout' | 'callback_error' | 'invalid_output' | 'empty_output' | 'over_budget' | 'aborted' | 'breaker_open';

/** `F`: the guard's format, `M`: the messages' type. */
export interface PrepareOptions<F extends Format = Format, M = MessageOf<F>> extends MeasureOptions<F> {
  /** The host's summarizer (`Summarize`). */
  summarize?(request: SummarizeRequest<ResultMessage<F, M>, SystemOf<F, M>>): Promise<string | SessionState> | string | SessionState;
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
  /** The recent tail kept verbatim by a compaction, in tokens (default: the guard's). */
  recentTailTokens?: number;
  /**
   * Past the ahead threshold (and under the trigger), start the summary in the background and
   * return at once; a later call that crosses the trigger uses it (or waits for it). Default: the
   * guard's `ahead`. `signal` and `guard.free()` abort it.
   */
  ahead?: boolean;
  /** Strategy `'session_state'` only: start the run from this SessionState (e.g. the last `settle` result's). */
  sessionState?: SessionState;
  /** This call's time in ms on a clock the host uses for every call (`Date.now()`): whether the provider's cache is still warm is judged by it (default: the guard's clock). */
  now?: number;
}

export interface Checkpoint<M = AnyMessage, S = SystemOf<Format, M>> {
  /** The self-contained chain to persist: system, summary (or evidence note), retained user messages, the current turn. Carries ctxguard's markers (a `ctxguard` key). */
  messages: M[];
  system: S | null;
}

/** `M`: the messages' type, `S`: the system's (as `GuardSourcesResult`). */
export interface PrepareResult<M = AnyMessage, S = SystemOf<Format, M>> {
  /** The model-visible messages to send now (no ctxguard metadata). */
  messages: M[];
  /** The request's system (`SystemOf`); `null` when there is none, and always for OpenAI Chat Completions. */
  system: S | null;
  metrics: ContextMetrics;
  traces: ProtectionTrace[];
  compaction: CompactionRecord | null;
  /** Persist this when it is not null. */
  checkpoint: Checkpoint<M, S> | null;
  degraded: boolean;
  degradedReason: DegradedReason | null;
  /** Messages left out: by the emergency layer (over the usable limit) and broken tool pairs or empty messages of the input (each of those with a `message_dropped` trace). */
  droppedMessages: number;
  /** The SessionState of this compaction (a text answer is its `summary`; the fallback's evidence likewise); `null` without one. */
  sessionState: SessionState | null;
  /** The cache-aware decision when the economic budget triggered compaction; `null` otherwise. */
  cacheDecision: CacheDecision | null;
}

export interface SettleOptions<F extends Format = Format, M = MessageOf<F>> extends MeasureOptions<F> {
  /** The conversation's own model; asked for a Settlement (see `Settlement` minus the bookkeeping fields), as JSON or its text. */
  summarize?(request: SummarizeRequest<ResultMessage<F, M>, SystemOf<F, M>>): Promise<SessionState | JsonValue> | SessionState | JsonValue;
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
  /** Overflows only, when the message states them: the input tokens the provider counted (a total with the output split off when the message gives both), the output part, a total it did not split, and its limit. */
  promptTokens: number | null;
  completionTokens: number | null;
  requestedTokens: number | null;
  limit: number | null;
  /** How exact the stated count is: `at_least` (vLLM's "at least N"), `about` (OpenRouter's "about N"). */
  countQualifier: 'exact' | 'at_least' | 'about' | null;
}

/** What `guard.observeOverflow` learned from an overflow error (with the classification's fields). */
export interface OverflowObservation extends ProviderErrorClassification {
  /** `learned`: the calibration now counts this request at least as the provider did; `exact_model`: recorded, counts unchanged; `approximate`: an "about" count, not learned. */
  outcome: 'not_overflow' | 'no_count' | 'approximate' | 'exact_model' | 'learned' | 'outlier';
  /** ctxguard's count of the request before (calibrated when a correction applied). */
  predicted: number;
  /** Its uncalibrated count. */
  estimated: number;
  /** (predicted − promptTokens) / promptTokens: negative when ctxguard counted low. */
  countError: number | null;
  /** Its count of the same request after learning. */
  predictedAfter: number | null;
  correction: number;
  contextWindow: number;
  /** The stated limit is below the guard's `contextWindow` (the budget is left as configured). */
  limitBelowWindow: boolean;
  calibration: CalibrationSummary | null;
}

/**
 * A guard for one conversation. `F` is its format, from `config.format`: with a format
 * TypeScript knows, messages, `system` and tools are typed as that format's (`FormatTypes`);
 * without one (the model then picks `'anthropic'` or `'openai'` at run time), any format's.
 */
export class ContextGuard<F extends Format = Format> {
  constructor(config?: GuardConfig & { format?: F });
  readonly budget: Budget;
  readonly model: ModelInfo;
  /** The source guards' limits in force, in the model's tokens: the config's, and the defaults resolved for the others. */
  readonly sourceLimits: SourceLimits;
  /** Counts the messages (cached per message content) and returns the metrics snapshot. Never modifies `messages`. */
  measure<M extends AnyMessage>(messages: Messages<F, M>, options?: MeasureOptions<F>): ContextMetrics;
  readonly cacheStats: CacheStats;
  /**
   * The whole pipeline before a model call: source guards, summary compaction through
   * `summarize` when over the trigger (or `force`), the emergency layer, tool-pair sanitation.
   * Rejects only on bad input; a failing summarizer gives `degraded: true`. `result.messages`
   * are the caller's own type (with ctxguard's notes where the format keeps them in the list).
   */
  prepare<M extends AnyMessage>(
    messages: Messages<F, M>,
    options?: PrepareOptions<F, M>,
  ): Promise<PrepareResult<ResultMessage<F, M>, SystemOf<F, M>>>;
  /**
   * End-of-run settlement: asks `summarize` for `{ session_state, memory_entries, reflections,
   * learnings }` (3 attempts, then a mechanical SessionState with `degraded: true`).
   */
  settle<M extends AnyMessage>(messages: Messages<F, M>, options?: SettleOptions<F, M>): Promise<Settlement>;
  /** Source guards only (tool outputs, attachments) over a copy of `messages`. */
  guardSources<M extends AnyMessage>(
    messages: Messages<F, M>,
    options?: GuardSourcesOptions<F>,
  ): GuardSourcesResult<ResultMessage<F, M>, SystemOf<F, M>>;
  /** Learn from the provider's reported usage for the request that was sent. */
  observeUsage<M extends AnyMessage>(args: ObserveUsageArgs<F, M>): CalibrationSummary | null;
  /**
   * Learn from a provider's context-overflow error for `messages` (the request that was sent):
   * the stated count corrects an estimated model's calibration so the next `prepare` fits.
   * Never throws because of `error`.
   */
  observeOverflow<M extends AnyMessage>(error: unknown, messages: Messages<F, M>, options?: MeasureOptions<F>): OverflowObservation;
  /** The calibration state (plain JSON to persist); assign a saved one to restore it. */
  get calibration(): CalibrationState;
  set calibration(state: CalibrationState);
  /**
   * After a reload: remember the summary of a stored checkpoint (`result.checkpoint`, after a
   * JSON round trip), so that `prepare` on the whole display history applies it instead of
   * asking the summarizer again. It applies only while the messages it covers are the start of
   * the history given.
   */
  restore<M extends AnyMessage>(checkpoint: Checkpoint<M, SystemOf<F, M>> | readonly M[]): RestoreResult;
  /** Close the summarizer's circuit breaker now. */
  resetBreaker(): void;
  /** Releases the guard's WebAssembly memory (a summary being made ahead of time is aborted); later calls throw (or reject with) `GUARD_FREED`. Safe to call twice. */
  free(): void;
}

export function countTokens(text: string, options?: CountTokensOptions): number;
/**
 * Loads a vocabulary: a name (`'llama3'`, `'qwen3'`, `'deepseek-v3'`, `'mistral-tekken'`,
 * `'mistral-spm-v3'`, `'mistral-spm-v7'`), an alias (`'qwen2.5'`, `'deepseek-r1'`, `'tekken'`...) or
 * a model id (`'llama3.1:8b'`, `'mistral-large-2411'`), read from
 * the package (Node) or fetched (browsers, workers); or bytes the host fetched itself (this
 * format, a Hugging Face `tokenizer.json`, a Mistral `tekken.json`). After it resolves, counts,
 * `modelInfo` and new guards for that family's models are exact (and synchronous).
 */
export function loadVocabulary(what: VocabularyName | (string & {}) | Uint8Array | ArrayBuffer): Promise<LoadedVocabulary>;
/** Counts a whole request in format `F` (`options.format`) as the provider bills it. */
export function countMessages<M extends AnyMessage, F extends Format = Format>(
  messages: Messages<F, M>,
  options?: CountMessagesOptions<F>,
): CountMessagesResult;
export function modelInfo(model: string): ModelInfo;
/** The list of models in the built-in table. */
export function knownModels(): ModelInfo[];
/** Compact one tool output into its stable compact form (head, marker line, tail; JSON stays JSON). */
export function compactToolOutput(text: string, options?: CompactToolOutputOptions): CompactResult;
/** A bounded preview of one attachment's text. */
export function previewAttachment(text: string, options?: PreviewAttachmentOptions): CompactResult;
/**
 * The `read_attachment` tool definition for the model, in the shape of `format` (default
 * `'openai'`): a Chat Completions tool, a Responses function tool, an Anthropic tool, a Gemini
 * tool with one function declaration, or for the AI SDK a ToolSet entry
 * `{ read_attachment: { description, inputSchema } }` (wrap it:
 * `tool({ description, inputSchema: jsonSchema(inputSchema), execute })`).
 */
export function readAttachmentTool<F extends Format = 'openai'>(options?: { format?: F }): ReadAttachmentTool<F>;
/** One page of an attachment's full text. `source` maps attachment ids to their text (object or Map), or is the text itself. */
export function readAttachment(
  source: string | { [id: string]: string } | Map<string, string>,
  options: ReadAttachmentOptions,
): AttachmentPage;
/**
 * Every attachment the source guards recognize in `messages` (and `options.system`), with the
 * full text the reader serves and where it sits; `readAttachment(new Map(list.map((a) => [a.id,
 * a.text])), { id })` reads them.
 */
export function listAttachments<M extends AnyMessage, F extends Format = Format>(
  messages: Messages<F, M>,
  options?: ListAttachmentsOptions<F>,
): ListedAttachment[];
/**
 * The wire format of a messages array or a request object (`{ messages, system?, tools? }`,
 * `{ input, instructions? }`, `{ contents, systemInstruction? }`); `null` when it is none of
 * them. Messages that every format takes (plain text) are `'openai'`.
 */
export function detectFormat(messagesOrRequest: unknown): Format | null;
/**
 * What a failed provider call means: context overflow (compact and retry), payload too large,
 * rate limit, or other. Takes anything — a `ProviderErrorInput`, an SDK error, a raw body string —
 * and never throws: unreadable input is `'other'`.
 */
export function classifyProviderError(error: unknown): ProviderErrorClassification;
/** A model input as pre-model hooks pass it along: the messages (`M`), the system (`S`), and whatever else the host carries. */
export interface ModelInput<M = AnyMessage, S = SystemOption> {
  messages: M[];
  system?: S | null;
  [key: string]: unknown;
}

/** A pre-model hook: returns the next model input, or nothing to keep the one it was given. */
export type PreModelHook<I = ModelInput> = (input: I) => I | undefined | void | Promise<I | undefined | void>;

/**
 * Compose hooks in order; each sees the previous one's model input (`I`, e.g.
 * `ModelInput<ChatCompletionMessageParam>`). Throws `INVALID_OPTIONS` for a non-function; the
 * chained hook rejects with whatever a hook throws.
 */
export function chainPreModelHooks<I extends { messages: readonly unknown[] } = ModelInput>(
  hooks: readonly PreModelHook<I>[],
): (input: I) => Promise<I>;
/** One stored turn of a conversation in format `F`, its messages of type `M`. */
export interface StoredTurn<F extends Format = Format, M = MessageOf<F>> {
  id?: string | number | null;
  /** The turn's persisted message chain (for a compacting turn: the `checkpoint` of its `prepare`). */
  messages: Messages<F, M>;
  /** Formats with a separate system: the turn's `system` (a checkpoint's `system`), when it has one. */
  system?: SystemIn<F> | null;
  status?: string | null;
}

export interface ResolveHistoryOptions<F extends Format = Format> {
  /** Turns after the checkpoint to keep (the latest); never cuts into the checkpoint chain. */
  limit?: number;
  /** Resolve the history before this message id (edit / fork). */
  beforeMessageId?: string;
  /** Default `'openai'`. */
  format?: F;
  /** The guard's `checkpointKey`, when summaries are sealed with one. */
  checkpointKey?: string;
}

/** `M`: the messages' type, `S`: the system's (as `PrepareResult`). */
export interface ResolvedHistory<M = AnyMessage, S = SystemOf<Format, M>> {
  messages: M[];
  /** The merged system of the turns (`SystemOf`); `null` when there is none, and always for OpenAI Chat Completions. */
  system: S | null;
  /** Index of the turn holding the checkpoint, or `null`. */
  checkpointIndex: number | null;
  fromCheckpoint: boolean;
}

/**
 * The history to continue from: the latest checkpoint's chain plus every later turn in full.
 * A checkpoint is a sealed `[ctxguard:summary]` block in a system message (verified with
 * `checkpointKey` when given); text a user or a tool writes never counts.
 */
export function resolveHistory<M extends AnyMessage, F extends Format = Format>(
  turns: readonly StoredTurn<F, M>[],
  options?: ResolveHistoryOptions<F>,
): ResolvedHistory<ResultMessage<F, M>, SystemOf<F, M>>;
/** The crate version. */
export function version(): string;

/** `memoryStats()`: diagnostics for long sessions. */
export interface MemoryStats {
  /** Size of the WebAssembly linear memory in bytes (grows, never shrinks: a high-water mark). */
  wasmBytes: number;
}
export function memoryStats(): MemoryStats;
