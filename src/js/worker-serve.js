// Worker side of `ctxguard/worker` in browsers (the `ctxguard/worker/serve` entry): loaded in a
// dedicated Web Worker, it loads ctxguard there and serves the main thread's createWorkerGuard().
//
//   // guard.worker.js, started as a module worker (new Worker(url, { type: 'module' })):
//   import 'ctxguard/worker/serve';
//
// or, with methods of your own next to the guard's: import { serveGuard } from 'ctxguard/worker/serve';
// serveGuard({ methods: { myMethod(arg, { api, messages, guard, progress, signal }) { ... } } }).
// No top-level await here (the .wasm is loaded inside serveGuard), so bundlers may emit the
// worker in any format.
import * as api from './api.js';
import init from './ctxguard_wasm.js';
import { wasmUnavailable } from './errors.js';
import './vocab-web.js';
import { serveOnce } from './worker-host.js';

const scope = globalThis;
const inWorker = typeof scope.WorkerGlobalScope === 'function' && scope instanceof scope.WorkerGlobalScope && typeof scope.postMessage === 'function';

const endpoint = inWorker
  ? { post: (message) => scope.postMessage(message), listen: (handler) => scope.addEventListener('message', (event) => handler(event.data)) }
  : null;

export const serveGuard = serveOnce(endpoint, async () => {
  if (typeof WebAssembly !== 'object') throw new Error('WebAssembly is not available in this worker');
  const wasm = new URL('./ctxguard_wasm_bg.wasm', import.meta.url);
  try {
    await init({ module_or_path: wasm });
  } catch (e) {
    throw wasmUnavailable(wasm, e);
  }
  return api;
});

// Serve as soon as the module is loaded in a worker; a failure is reported to the main thread.
if (inWorker) serveGuard().catch(() => {});
