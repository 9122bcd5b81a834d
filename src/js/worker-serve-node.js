// Worker side of `ctxguard/worker` in Node (the `node` condition of `ctxguard/worker/serve`):
// loaded in a worker_threads Worker, it serves the main thread's createWorkerGuard().
//
//   // guard-worker.mjs, started with new Worker(<its URL>) from node:worker_threads
//   import 'ctxguard/worker/serve';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as api from './node.js';
import { serveOnce } from './worker-host.js';

const endpoint = !isMainThread && parentPort
  ? { post: (message) => parentPort.postMessage(message), listen: (handler) => parentPort.on('message', handler) }
  : null;

export const serveGuard = serveOnce(endpoint, async () => api);

if (endpoint) serveGuard().catch(() => {});
