// The public surface of the `ctxguard` package, shared by both entries (node.js, index.js).
// Exactly the runtime exports declared in index.d.ts; tests/js/package.test.mjs keeps the two in step.
// This module only re-exports: it must not call into wasm, because it is evaluated before the
// entry that imports it has instantiated the module.
export {
  ContextGuard,
  countMessages,
  countTokens,
  knownModels,
  modelInfo,
} from './ctxguard_wasm.js';

/** The package version (the crate's, written in by scripts/finish-pkg.mjs). */
export const version = '0.0.0-unbuilt';
