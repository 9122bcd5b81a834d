// Types of the counting-only builds `ctxguard/o200k/count` and `ctxguard/cl100k/count`: the
// counting part of the `ctxguard` API, with the same types.
export { countTokens, knownModels, memoryStats, modelInfo, version } from './index.js';
export type { CountKind, CountTokensOptions, Encoding, ErrorCode, MemoryStats, ModelInfo } from './index.js';
