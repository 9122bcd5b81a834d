// Types of `ctxguard/worker`: ContextGuard in a Web Worker (or a Node worker thread), with the
// host's callbacks on the calling thread. Hand-written, checked by `tsc --noEmit -p tests/ts`.
import type {
  AnyMessage,
  AttachmentPage,
  Budget,
  CacheStats,
  CalibrationState,
  CalibrationSummary,
  Checkpoint,
  CompactResult,
  CompactToolOutputOptions,
  ContextMetrics,
  CountMessagesOptions,
  CountMessagesResult,
  CountTokensOptions,
  ErrorCode,
  Format,
  GuardConfig,
  GuardSourcesOptions,
  GuardSourcesResult,
  ListAttachmentsOptions,
  ListedAttachment,
  LoadedVocabulary,
  MeasureOptions,
  Messages,
  MessageOf,
  ModelInfo,
  ObserveUsageArgs,
  OverflowObservation,
  PrepareOptions,
  PrepareResult,
  PreviewAttachmentOptions,
  ProviderErrorClassification,
  ReadAttachmentOptions,
  SourceLimits,
  ReadAttachmentTool,
  ResolvedHistory,
  RestoreResult,
  ResolveHistoryOptions,
  ResultMessage,
  Settlement,
  SettleOptions,
  StoredTurn,
  SystemOf,
  VocabularyName,
} from './index.js';

/** Codes of the worker helper's own errors, next to ctxguard's. */
export type WorkerErrorCode =
  /** The worker did not start serving: its script failed, it has no WebAssembly, or it does not import ctxguard/worker/serve. Also: the worker died. */
  | 'WORKER_FAILED'
  /** `terminate()` was called: pending and later calls reject with it. */
  | 'WORKER_TERMINATED'
  /** The guard was freed. */
  | 'GUARD_FREED';

/** Errors from the worker keep their `name`, `message`, `code` and `index`. */
export interface WorkerError extends Error {
  code?: ErrorCode | WorkerErrorCode;
  index?: number;
}

/** Something that runs a module serving ctxguard: a Web Worker, or a Node `worker_threads` Worker. */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): unknown;
}

export interface WorkerOptions {
  /** How long to wait for the worker to load ctxguard and answer (default 60000 ms). */
  readyTimeoutMs?: number;
  /**
   * String characters of messages the worker keeps beyond those of the latest call, for
   * conversations the page alternates between (default 16,000,000, about 32 MB of strings).
   */
  cacheChars?: number;
}

export interface TransferStats {
  calls: number;
  /** Messages sent in full so far (new or changed). */
  messagesSent: number;
  /** Messages sent as a reference to the copy the worker has. */
  messagesReused: number;
  /** String characters of the messages sent in full. */
  charsSent: number;
  /** The last call that carried messages: what was sent, and the time spent on this thread. */
  lastCall: { messages: number; sent: number; reused: number; chars: number; encodeMs: number; postMs: number } | null;
  /** Messages the worker keeps, and their string characters. */
  storedMessages: number;
  storedChars: number;
}

/** What a method added with `serveGuard({ methods })` gets next to its argument. */
export interface CallOptions {
  /** A conversation for the method (`ctx.messages`), sent like a guard call's. */
  messages?: readonly AnyMessage[];
  /** Aborts `ctx.signal` in the worker. */
  signal?: AbortSignal;
  /** Receives what the method passes to `ctx.progress(event)`. */
  onProgress?: (event: unknown) => void;
}

/** A connection to a worker serving ctxguard: guards, the free functions, custom methods. */
export declare class WorkerConnection {
  private constructor();
  /** The ctxguard version the worker runs. */
  readonly version: string | null;
  readonly worker: WorkerLike;
  readonly transferStats: TransferStats;
  /** A ContextGuard in the worker (format `F` as `ContextGuard`'s); rejects with ctxguard's error for an invalid config. */
  createGuard<F extends Format = Format>(config?: GuardConfig & { format?: F }): Promise<WorkerGuard<F>>;
  countMessages<M extends AnyMessage, F extends Format = Format>(
    messages: Messages<F, M>,
    options?: CountMessagesOptions<F>,
  ): Promise<CountMessagesResult>;
  countTokens(text: string, options?: CountTokensOptions): Promise<number>;
  modelInfo(model: string): Promise<ModelInfo>;
  knownModels(): Promise<ModelInfo[]>;
  /** Loads a vocabulary in the worker (see `loadVocabulary`): its counts become exact there. */
  loadVocabulary(what: VocabularyName | (string & {}) | Uint8Array | ArrayBuffer): Promise<LoadedVocabulary>;
  compactToolOutput(text: string, options?: CompactToolOutputOptions): Promise<CompactResult>;
  previewAttachment(text: string, options?: PreviewAttachmentOptions): Promise<CompactResult>;
  readAttachment(source: string | { [id: string]: string } | Map<string, string>, options: ReadAttachmentOptions): Promise<AttachmentPage>;
  readAttachmentTool<F extends Format = 'openai'>(options?: { format?: F }): Promise<ReadAttachmentTool<F>>;
  resolveHistory<M extends AnyMessage, F extends Format = Format>(
    turns: readonly StoredTurn<F, M>[],
    options?: ResolveHistoryOptions<F>,
  ): Promise<ResolvedHistory<ResultMessage<F, M>, SystemOf<F, M>>>;
  classifyProviderError(error: unknown): Promise<ProviderErrorClassification>;
  listAttachments<M extends AnyMessage, F extends Format = Format>(
    messages: Messages<F, M>,
    options?: ListAttachmentsOptions<F>,
  ): Promise<ListedAttachment[]>;
  detectFormat(messagesOrRequest: unknown): Promise<Format | null>;
  /** Calls a method the worker added with `serveGuard({ methods })`. */
  call<T = unknown>(name: string, arg?: unknown, options?: CallOptions): Promise<T>;
  /** Stops the worker; pending and later calls reject with `WORKER_TERMINATED`. */
  terminate(): unknown;
}

/** A ContextGuard living in a worker: the same methods, types and options, asynchronous. */
export declare class WorkerGuard<F extends Format = Format> {
  private constructor();
  readonly budget: Budget;
  readonly model: ModelInfo;
  readonly sourceLimits: SourceLimits;
  /** The guard's id in its worker (for custom methods: `ctx.guard(id)`). */
  readonly id: number;
  readonly worker: WorkerConnection;
  measure<M extends AnyMessage>(messages: Messages<F, M>, options?: MeasureOptions<F>): Promise<ContextMetrics>;
  guardSources<M extends AnyMessage>(
    messages: Messages<F, M>,
    options?: GuardSourcesOptions<F>,
  ): Promise<GuardSourcesResult<ResultMessage<F, M>, SystemOf<F, M>>>;
  /** `summarize`, `onProgress`, `onTrace` and `logger` run on this thread; the pipeline (timeout, retries, fallback) in the worker. */
  prepare<M extends AnyMessage>(
    messages: Messages<F, M>,
    options?: PrepareOptions<F, M>,
  ): Promise<PrepareResult<ResultMessage<F, M>, SystemOf<F, M>>>;
  settle<M extends AnyMessage>(messages: Messages<F, M>, options?: SettleOptions<F, M>): Promise<Settlement>;
  /** `countMessages` in the guard's worker (`options.format` as the free function's). */
  countMessages<M extends AnyMessage, G extends Format = Format>(
    messages: Messages<G, M>,
    options?: CountMessagesOptions<G>,
  ): Promise<CountMessagesResult>;
  observeUsage<M extends AnyMessage>(args: ObserveUsageArgs<F, M>): Promise<CalibrationSummary | null>;
  /** `guard.observeOverflow`, in the worker (the error travels as the fields `classifyProviderError` reads). */
  observeOverflow<M extends AnyMessage>(error: unknown, messages: Messages<F, M>, options?: MeasureOptions<F>): Promise<OverflowObservation>;
  cacheStats(): Promise<CacheStats>;
  calibration(): Promise<CalibrationState>;
  setCalibration(state: CalibrationState): Promise<void>;
  /** `guard.restore(checkpoint)`, in the worker. */
  restore<M extends AnyMessage>(checkpoint: Checkpoint<M, SystemOf<F, M>> | readonly M[]): Promise<RestoreResult>;
  /** `guard.resetBreaker()`, in the worker. */
  resetBreaker(): Promise<void>;
  /** Frees the guard in the worker once its pending calls are done; later calls reject with `GUARD_FREED`. */
  free(): void;
  /** Stops the worker (every guard on it). */
  terminate(): unknown;
}

/** Connects to a worker that imports `ctxguard/worker/serve` (a URL starts a module worker). Reused for the same Worker. */
export function connectGuardWorker(worker: WorkerLike | URL | string | WorkerConnection, options?: WorkerOptions): Promise<WorkerConnection>;

/** `connectGuardWorker(worker).then((w) => w.createGuard(config))`. */
export function createWorkerGuard<F extends Format = Format>(
  worker: WorkerLike | URL | string | WorkerConnection,
  config?: GuardConfig & { format?: F },
  options?: WorkerOptions,
): Promise<WorkerGuard<F>>;
