// Node.js entry of the `ctxguard` package (the `node` export condition).
// Reads the WebAssembly module from disk and instantiates it synchronously at import time, so
// every export works as soon as `import` resolves.
import { readFileSync } from 'node:fs';
import { initSync } from './ctxguard_wasm.js';
import './vocab-node.js';

initSync({ module: readFileSync(new URL('./ctxguard_wasm_bg.wasm', import.meta.url)) });

export * from './api.js';
