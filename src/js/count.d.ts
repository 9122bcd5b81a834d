// Types of the counting-only builds `ctxguard/o200k/count` and `ctxguard/cl100k/count`: the
// counting part of the `ctxguard` API, with the same types.
export { countTokens, knownModels, loadVocabulary, memoryStats, modelInfo, version } from './index.js';
export type { CountKind, CountTokensOptions, Encoding, ErrorCode, LoadedVocabulary, MemoryStats, ModelInfo, VocabularyName } from './index.js';
