// Browser / worker / edge entry of the `ctxguard` package (published as index.js; the `browser`
// and `default` export conditions). Fetches and instantiates the WebAssembly module with a
// top-level await, so every export works as soon as `import` resolves — with native ES modules,
// no bundler needed. The .wasm must be served as application/wasm.
import init from './ctxguard_wasm.js';
import { wasmUnavailable } from './errors.js';
import './vocab-web.js';

const wasm = new URL('./ctxguard_wasm_bg.wasm', import.meta.url);
try {
  await init({ module_or_path: wasm });
} catch (e) {
  throw wasmUnavailable(wasm, e);
}

export * from './api.js';
