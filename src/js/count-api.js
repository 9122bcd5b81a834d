// The public surface of the counting-only builds `ctxguard/o200k/count` and
// `ctxguard/cl100k/count` (published as api.js in pkg/<encoding>/count/, next to their own
// node.js and index.js entries): the exports declared in count.d.ts, picked by name from the
// generated glue of a .wasm built without the `pipeline` feature. Same counts, options and
// errors as the full package; tests/js/count-builds.test.mjs checks both.
// This module must not call into wasm (see api.js).
import * as wasm from './ctxguard_wasm.js';

export { loadVocabulary } from './vocab.js';

export const countTokens = wasm.countTokens;
export const knownModels = wasm.knownModels;
export const memoryStats = wasm.memoryStats;
export const modelInfo = wasm.modelInfo;
export const version = wasm.version;
