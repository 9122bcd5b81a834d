// The public surface of the `ctxguard` package, shared by both entries (node.js, index.js):
// exactly the runtime exports declared in index.d.ts, picked by name from the generated glue.
// tests/js/package.test.mjs fails if one of them is missing from the binding.
// This module must not call into wasm: it is evaluated before the entry that imports it has
// instantiated the module.
import * as wasm from './ctxguard_wasm.js';

import { checkFreed } from './freed.js';
import { installMessageMemo } from './memo.js';

export { chainPreModelHooks } from './hooks.js';
export { loadVocabulary } from './vocab.js';

// `measure` sends only new or changed messages into wasm (memo.js); patching the prototype does
// not call into wasm.
installMessageMemo(wasm.ContextGuard);
// A freed guard answers GUARD_FREED, not wasm-bindgen's bare "null pointer" error (freed.js).
checkFreed(wasm.ContextGuard);
export const ContextGuard = wasm.ContextGuard;
export const classifyProviderError = wasm.classifyProviderError;
export const compactToolOutput = wasm.compactToolOutput;
export const countMessages = wasm.countMessages;
export const countTokens = wasm.countTokens;
export const detectFormat = wasm.detectFormat;
export const knownModels = wasm.knownModels;
export const listAttachments = wasm.listAttachments;
export const memoryStats = wasm.memoryStats;
export const modelInfo = wasm.modelInfo;
export const previewAttachment = wasm.previewAttachment;
export const readAttachment = wasm.readAttachment;
export const readAttachmentTool = wasm.readAttachmentTool;
export const resolveHistory = wasm.resolveHistory;
export const version = wasm.version;
