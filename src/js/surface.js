// The package's surface in one table: every export of the binding (src/wasm/), which of them are
// asynchronous, where each is served, the error codes, and the fields of a provider error that
// classifyProviderError reads. The worker host (worker-host.js), its client (worker.js) and
// freed.js read it; api.js, count-api.js and the .d.ts files list the same names, which
// tests/js/surface.test.mjs checks against this table, and this table against the built binding
// (the glue's exports, ContextGuard's prototype), src/base/error.rs, src/provider/overflow.rs and
// docs/api.md. Adding an export: the Rust function in src/wasm/, a row here, its declaration and
// docs/api.md; the test names what is missing.
// Plain data: no import, no wasm.

/**
 * Free functions of the package, by their JS name. `count`: also in the counting-only builds
 * (`ctxguard/<encoding>/count`, count-api.js); `worker`: served by `ctxguard/worker` (a method of
 * WorkerConnection, except `version`, which the connection has as a property); `js`: made in
 * src/js/ over the binding's BINDING_ONLY forms, not a binding export itself.
 */
export const FUNCTIONS = Object.freeze({
  countTokens: { count: true, worker: true },
  modelInfo: { count: true, worker: true },
  knownModels: { count: true, worker: true },
  version: { count: true, worker: true },
  memoryStats: { count: true, worker: false },
  countMessages: { count: false, worker: true },
  compactToolOutput: { count: false, worker: true },
  previewAttachment: { count: false, worker: true },
  readAttachment: { count: false, worker: true },
  readAttachmentTool: { count: false, worker: true },
  resolveHistory: { count: false, worker: true },
  classifyProviderError: { count: false, worker: true },
  listAttachments: { count: false, worker: true },
  detectFormat: { count: false, worker: true },
  loadVocabulary: { count: true, worker: true, js: true },
});

/**
 * Binding exports that no entry re-exports: the forms a JS-made function (`js: true` above) calls.
 * loadVocabulary (vocab.js) reads the vocabulary file the name maps to, then hands its bytes over.
 */
export const BINDING_ONLY = Object.freeze(['vocabularyFile', 'loadedVocabulary', 'loadVocabularyBytes']);

/** The free functions the binding (src/wasm/) exports: the table's own, and BINDING_ONLY. */
export const BINDING_FUNCTIONS = Object.freeze([...Object.keys(FUNCTIONS).filter((name) => !FUNCTIONS[name].js), ...BINDING_ONLY]);

/**
 * ContextGuard. `methods`: name → whether it returns a Promise (freed.js rejects instead of
 * throwing for those; WorkerGuard has every method, all asynchronous). `state`: accessors that
 * WorkerGuard has as methods (`setX` for a settable one). `properties`: read once, plain
 * properties of a WorkerGuard. `stored`: the binding's id-keyed forms memo.js calls, not public.
 */
export const GUARD = Object.freeze({
  methods: Object.freeze({
    measure: false,
    guardSources: false,
    prepare: true,
    settle: true,
    observeUsage: false,
    observeOverflow: false,
    restore: false,
    resetBreaker: false,
  }),
  state: Object.freeze({ cacheStats: { settable: false }, calibration: { settable: true } }),
  properties: Object.freeze(['budget', 'model', 'sourceLimits']),
  stored: Object.freeze(['measureStored', 'guardSourcesStored', 'prepareStored']),
});

/** The guard calls a worker serves: every method, and each state accessor as a method. */
export const WORKER_GUARD_CALLS = Object.freeze([
  ...Object.keys(GUARD.methods),
  ...Object.entries(GUARD.state).flatMap(([name, { settable }]) => (settable ? [name, `set${name[0].toUpperCase()}${name.slice(1)}`] : [name])),
]);

/** Guard methods that return a Promise. */
export const ASYNC_METHODS = Object.freeze(Object.keys(GUARD.methods).filter((name) => GUARD.methods[name]));

/** Free functions a worker serves. */
export const WORKER_FUNCTIONS = Object.freeze(Object.keys(FUNCTIONS).filter((name) => FUNCTIONS[name].worker));

/**
 * Every `code` of a CtxguardError: `core` ones come from the Rust core (ErrorCode in
 * src/base/error.rs), the others are made on the JS side.
 */
export const ERROR_CODES = Object.freeze({
  INVALID_OPTIONS: 'core',
  INVALID_MESSAGES: 'core',
  INVALID_MESSAGE: 'core',
  INVALID_ROLE: 'core',
  INVALID_CONTENT_PART: 'core',
  INVALID_TOOL: 'core',
  UNKNOWN_ENCODING: 'core',
  UNKNOWN_FORMAT: 'core',
  UNKNOWN_MODEL: 'core',
  INVALID_BUDGET: 'core',
  INVALID_TEXT: 'core',
  UNKNOWN_ATTACHMENT: 'core',
  LATEST_MESSAGE_TOO_LARGE: 'core',
  VOCABULARY_NOT_LOADED: 'core',
  UNKNOWN_VOCABULARY: 'core',
  INVALID_VOCABULARY: 'core',
  UNSUPPORTED_VOCABULARY: 'core',
  VOCABULARY_CONFLICT: 'core',
  VOCABULARY_UNAVAILABLE: 'js',
  WASM_UNAVAILABLE: 'js',
  INTERNAL: 'core',
  GUARD_FREED: 'js',
  WORKER_FAILED: 'worker',
  WORKER_TERMINATED: 'worker',
});

/**
 * The top-level fields of a caught provider error that classifyProviderError reads, in order
 * (STATUS_FIELDS then TEXT_FIELDS in src/provider/overflow.rs). The worker client copies these from an
 * SDK error (a class instance, not cloneable) before sending it.
 */
/**
 * The vocabulary files the package ships (vocab/<name>.bin and <name>.LICENSE.txt), as
 * src/tokens/vocabulary.rs lists them: loadVocabulary's names. vocab-web.js holds one literal URL
 * for each (bundlers need the literal); tests/js/vocabularies.test.mjs checks both lists.
 */
export const VOCABULARIES = Object.freeze(['llama3', 'qwen3', 'deepseek-v3', 'mistral-tekken', 'mistral-spm-v3', 'mistral-spm-v7']);

export const PROVIDER_ERROR_FIELDS = Object.freeze(['status', 'statusCode', 'status_code', 'message', 'code', 'body', 'error']);
