// The worker side of `ctxguard/worker`: runs ContextGuard calls for the main thread and forwards
// the summarizer, progress, trace and log callbacks back to it. Entries: worker-serve.js
// (browsers: dedicated workers) and worker-serve-node.js (Node worker_threads).
//
// The pipeline itself (timeout, 3 attempts, heartbeats, fallback, abort) runs here, exactly as in
// the main-thread API: the summarizer it calls is a proxy that asks the main thread and whose
// signal, when the pipeline aborts it (timeout, caller abort), aborts the main thread's call.

import { ctxguardError } from './errors.js';
import { WORKER_FUNCTIONS as FUNCTIONS, WORKER_GUARD_CALLS as GUARD_METHODS } from './surface.js';
import { PROTOCOL, errorData, reasonData, reasonFrom, thrownValue, valueOf } from './worker-wire.js';

// FUNCTIONS: the free functions the main thread may call; GUARD_METHODS: the guard's calls
// (messages first, options second with callbacks, or a single argument). Both from surface.js.

/**
 * Serves ctxguard over `endpoint` ({ post(message), listen(handler) }) with `api` (the package's
 * exports, initialized). Returns `{ addMethods(methods) }`.
 */
export function createHost(api, endpoint) {
  const guards = new Map(); // gid -> { guard, calls, freeing }
  const store = new Map(); // message id -> message (the main thread decides what is kept)
  const calls = new Map(); // call id -> AbortController (for prepare/settle/custom calls)
  const summaries = new Map(); // summary id -> { resolve }
  const methods = Object.create(null);
  let nextSummary = 0;

  const post = (message) => {
    try {
      endpoint.post(message);
    } catch (e) {
      // A result that cannot be cloned (it never should: ctxguard returns plain JSON data).
      if (message.t === 'res') endpoint.post({ t: 'res', id: message.id, ok: false, error: errorData(e) });
    }
  };

  /** The messages array of a call: stored messages by id, new ones stored, the dropped ones forgotten. */
  function messagesOf(wire) {
    if (!wire) return undefined;
    if ('whole' in wire) return valueOf(wire.whole);
    for (const id of wire.drop ?? []) store.delete(id);
    const out = new Array(wire.items.length);
    for (let i = 0; i < wire.items.length; i++) {
      const item = wire.items[i];
      if (typeof item === 'number') {
        if (!store.has(item)) throw new Error(`ctxguard worker: message ${item} is not in the worker's store (protocol error)`);
        out[i] = store.get(item);
      } else {
        const value = valueOf(item);
        if (item.id !== undefined) store.set(item.id, value);
        out[i] = value;
      }
    }
    return out;
  }

  function optionsOf(wire, id) {
    if (!wire) return undefined;
    if ('raw' in wire) return valueOf(wire.raw);
    const opts = {};
    for (const [key, payload] of wire.fields) opts[key] = valueOf(payload);
    const cb = wire.callbacks ?? {};
    if (cb.summarize) opts.summarize = (request) => askMain(id, request);
    for (const [name, kind] of [['onProgress', 'progress'], ['onTrace', 'trace'], ['logger', 'log']]) {
      if (cb[name]) opts[name] = (arg) => post({ t: 'ev', id, k: kind, a: arg });
    }
    if (cb.signal) opts.signal = calls.get(id).signal;
    return opts;
  }

  /** The summarizer proxy: the request goes to the main thread; its signal aborts the main thread's call. */
  function askMain(id, request) {
    return new Promise((resolve) => {
      const sid = ++nextSummary;
      const { signal, ...rest } = request;
      summaries.set(sid, { resolve });
      if (signal) {
        signal.addEventListener('abort', () => {
          if (summaries.delete(sid)) post({ t: 'sumabort', sid, reason: reasonData(signal.reason) });
        }, { once: true });
      }
      post({ t: 'sum', id, sid, request: rest });
    });
  }

  function onSummary(message) {
    const entry = summaries.get(message.sid);
    if (!entry) return; // already timed out or aborted here: the late answer is ignored, as on the main thread
    summaries.delete(message.sid);
    if (message.ok) entry.resolve(valueOf(message.value));
    else entry.resolve(Promise.reject(thrownValue(message.thrown)));
  }

  function guardOf(gid) {
    const entry = guards.get(gid);
    if (!entry || entry.freeing) throw ctxguardError('GUARD_FREED', 'this guard was freed');
    return entry;
  }

  function release(entry, gid) {
    if (entry.freeing && entry.calls === 0) {
      guards.delete(gid);
      entry.guard.free();
    }
  }

  async function run(message) {
    const { id } = message;
    switch (message.t) {
      case 'guard': {
        const guard = new api.ContextGuard(optionsOf(message.config, id));
        guards.set(message.gid, { guard, calls: 0, freeing: false });
        return { budget: guard.budget, model: guard.model, sourceLimits: guard.sourceLimits };
      }
      case 'call': {
        const messages = messagesOf(message.messages);
        const opts = optionsOf(message.options, id);
        const args = (message.args ?? []).map((a) => (a !== null && typeof a === 'object' && 'opts' in a ? optionsOf(a.opts, id) : valueOf(a)));
        if (message.custom) {
          const fn = methods[message.method];
          if (typeof fn !== 'function') throw new Error(`ctxguard worker: no method ${JSON.stringify(message.method)} (add it with serveGuard({ methods }))`);
          const ctx = {
            api,
            messages,
            signal: calls.get(id)?.signal,
            progress: (event) => post({ t: 'ev', id, k: 'progress', a: event }),
            guard: (gid) => guardOf(gid).guard,
          };
          return fn(args[0], ctx);
        }
        if (message.gid === undefined) {
          if (!FUNCTIONS.includes(message.method)) throw new Error(`ctxguard worker: unknown function ${message.method}`);
          return messages === undefined ? api[message.method](...args) : api[message.method](messages, opts);
        }
        if (!GUARD_METHODS.includes(message.method)) throw new Error(`ctxguard worker: unknown method ${message.method}`);
        const entry = guardOf(message.gid);
        const { guard } = entry;
        entry.calls++;
        try {
          switch (message.method) {
            case 'cacheStats':
              return guard.cacheStats;
            case 'calibration':
              return guard.calibration;
            case 'setCalibration':
              guard.calibration = args[0];
              return undefined;
            case 'observeOverflow':
              return guard.observeOverflow(args[0], messages, opts);
            case 'restore':
              return guard.restore(args[0]);
            case 'resetBreaker':
              guard.resetBreaker();
              return undefined;
            case 'observeUsage':
              return guard.observeUsage(message.options && !('raw' in message.options) ? { ...opts, messages } : opts);
            default:
              return await guard[message.method](messages, opts);
          }
        } finally {
          entry.calls--;
          release(entry, message.gid);
        }
      }
      default:
        throw new Error(`ctxguard worker: unknown request ${message.t}`);
    }
  }

  endpoint.listen((message) => {
    if (!message || typeof message !== 'object') return;
    switch (message.t) {
      case 'guard':
      case 'call': {
        if (message.signal || message.custom) {
          const controller = new AbortController();
          if (message.signal?.aborted) controller.abort(reasonFrom(message.signal.reason));
          calls.set(message.id, controller);
        }
        // Synchronous part first (the store is updated in the order calls arrive), then the result.
        let pending;
        try {
          pending = Promise.resolve(run(message));
        } catch (e) {
          pending = Promise.reject(e);
        }
        pending.then(
          (value) => post({ t: 'res', id: message.id, ok: true, value }),
          (error) => post({ t: 'res', id: message.id, ok: false, error: errorData(error) }),
        ).finally(() => calls.delete(message.id));
        return;
      }
      case 'abort':
        calls.get(message.id)?.abort(reasonFrom(message.reason));
        return;
      case 'sumres':
        onSummary(message);
        return;
      case 'free': {
        const entry = guards.get(message.gid);
        if (entry) {
          entry.freeing = true;
          release(entry, message.gid);
        }
        return;
      }
      default:
    }
  });

  endpoint.post({ t: 'ready', protocol: PROTOCOL, version: api.version() });

  return {
    addMethods(more) {
      for (const [name, fn] of Object.entries(more ?? {})) {
        if (typeof fn !== 'function') throw new TypeError(`serveGuard: methods.${name} is not a function`);
        methods[name] = fn;
      }
    },
  };
}

/**
 * The serveGuard() of an entry. The first call loads ctxguard (`load()` resolves to the
 * initialized package) and starts serving on `endpoint`, or tells the main thread why it could
 * not (a browser without WebAssembly, a .wasm that did not load); later calls add methods.
 * Resolves once serving, rejects with the load error.
 */
export function serveOnce(endpoint, load) {
  let started = null;
  let host = null;
  const queued = [];
  return function serveGuard(options = {}) {
    if (!endpoint) return Promise.reject(new Error('serveGuard() runs in a worker (a dedicated Web Worker or a Node worker thread)'));
    if (options.methods) {
      if (host) host.addMethods(options.methods);
      else queued.push(options.methods);
    }
    started ??= load().then(
      (api) => {
        host = createHost(api, endpoint);
        for (const m of queued.splice(0)) host.addMethods(m);
      },
      (error) => {
        endpoint.post({ t: 'ready', protocol: PROTOCOL, error: errorData(error) });
        throw error;
      },
    );
    return started;
  };
}
