// Main-thread side of `ctxguard/worker`: ContextGuard in a Web Worker (or a Node worker thread),
// with the host's summarize / onProgress / onTrace / logger callbacks on the calling thread.
// Pure JS: this module does not load the WebAssembly module (the worker does).
//
//   // guard.worker.js holds one line: import 'ctxguard/worker/serve';
//   const worker = new Worker(<URL of guard.worker.js>, { type: 'module' });
//   const guard = await createWorkerGuard(worker, { model: 'gpt-4o' });
//   const metrics = await guard.measure(messages);
//   const result = await guard.prepare(messages, { summarize, onProgress, signal });
//
// Transfer: a conversation is sent once; later calls send only new or changed messages and name
// the others by id, and the worker keeps what this side tells it to keep (the messages of the
// latest call, plus older ones up to `cacheChars`): sent-messages.js, docs/stored-calls.md.

import { ctxguardError, errorWith } from './errors.js';
import { inheritedToJSON } from './json.js';
import { KeptByBudget, SentMessages } from './sent-messages.js';
import { PROVIDER_ERROR_FIELDS } from './surface.js';
import { PROTOCOL, jsonPayload, payloadOf, reasonData, reasonFrom, thrownData } from './worker-wire.js';

const CALLBACKS = { summarize: 'summarize', onProgress: 'progress', onTrace: 'trace', logger: 'log' };
const EVENT_CALLBACK = { progress: 'onProgress', trace: 'onTrace', log: 'logger' };
const DEFAULT_READY_TIMEOUT_MS = 60_000;
/** String characters of messages the worker keeps beyond those of the latest call (~2 bytes each). */
const DEFAULT_CACHE_CHARS = 16_000_000;

const connections = new WeakMap();
const INTERNAL = Symbol('ctxguard.worker');

const now = () => (globalThis.performance?.now ? globalThis.performance.now() : Date.now());
const isSignal = (v) => v !== null && typeof v === 'object' && typeof v.aborted === 'boolean' && typeof v.addEventListener === 'function';

function notify(fn, arg) {
  try {
    fn(arg);
  } catch {
    // Observer callbacks must not break the call (as on the main thread).
  }
}

/** A top-level option value: a Date stays a Date (ctxguard rejects it as such), the rest as JSON reads it. */
const optionPayload = (v) => (v instanceof Date ? { o: v } : payloadOf(v));

/** The fields classifyProviderError reads, as plain data (SDK errors are class instances). */
function providerErrorData(error) {
  if (error === null || typeof error !== 'object') return payloadOf(error);
  const out = {};
  for (const key of PROVIDER_ERROR_FIELDS) {
    let v;
    try {
      v = error[key];
    } catch {
      continue;
    }
    if (v !== undefined) out[key] = v;
  }
  return payloadOf(out);
}

/** The Worker for a target: a Worker (or worker_threads Worker) as is, a URL or string as a new module worker. */
function workerOf(target) {
  if (target !== null && typeof target === 'object' && typeof target.postMessage === 'function') return { worker: target, owns: false };
  if (typeof target === 'string' || target instanceof URL) {
    if (typeof globalThis.Worker !== 'function') {
      throw ctxguardError('WORKER_FAILED', 'this environment has no Web Worker: pass a started worker (in Node, a worker_threads Worker)');
    }
    return { worker: new globalThis.Worker(target, { type: 'module' }), owns: true };
  }
  throw ctxguardError('INVALID_OPTIONS', 'createWorkerGuard expects a Worker, or the URL of a module that imports ctxguard/worker/serve');
}

/**
 * A connection to a worker serving ctxguard. Reused for the same Worker object.
 * @param {Worker | URL | string | WorkerConnection} target
 * @param {{ readyTimeoutMs?: number, cacheChars?: number }} [options]
 * @returns {Promise<WorkerConnection>}
 */
export function connectGuardWorker(target, options = {}) {
  if (target instanceof WorkerConnection) return target[INTERNAL].ready.then(() => target);
  let worker;
  let owns;
  try {
    ({ worker, owns } = workerOf(target));
  } catch (e) {
    return Promise.reject(e);
  }
  let connection = connections.get(worker);
  if (!connection) {
    connection = new WorkerConnection(worker, owns, options);
    connections.set(worker, connection);
  }
  return connection[INTERNAL].ready.then(() => connection);
}

/**
 * A ContextGuard in a worker: `await createWorkerGuard(worker, config)`.
 * @returns {Promise<WorkerGuard>}
 */
export async function createWorkerGuard(target, config, options) {
  const connection = await connectGuardWorker(target, options);
  return connection.createGuard(config);
}

/** A connection to a worker serving ctxguard: its guards, the free functions, custom methods. */
export class WorkerConnection {
  constructor(worker, owns, { readyTimeoutMs = DEFAULT_READY_TIMEOUT_MS, cacheChars = DEFAULT_CACHE_CHARS } = {}) {
    const state = {
      worker,
      owns,
      closed: null, // the error every call gets once the worker is gone
      pending: new Map(), // call id -> { resolve, reject, callbacks, signal, onAbort, summaries }
      // Calls whose result started a summary ahead of time, which goes on in the worker: their
      // callbacks stay reachable (summarize, heartbeats, its trace) until its trace says it ended.
      background: new Map(),
      summaries: new Map(), // summary id -> { controller, call }
      sent: new SentMessages(), // message object -> { id, snap, chars }
      kept: new KeptByBudget(cacheChars), // what the worker keeps
      ids: { call: 0, message: 0, guard: 0 },
      stats: { calls: 0, messagesSent: 0, messagesReused: 0, charsSent: 0, lastCall: null },
      version: null,
      detach: () => {},
    };
    this[INTERNAL] = state;
    const self = this;
    state.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(ctxguardError('WORKER_FAILED', `the worker did not start serving within ${readyTimeoutMs} ms: does its module import ctxguard/worker/serve?`));
      }, readyTimeoutMs);
      state.onReady = (message) => {
        clearTimeout(timer);
        if (message.error) {
          const cause = errorWith(message.error);
          const e = ctxguardError('WORKER_FAILED', `ctxguard could not start in the worker: ${cause.name}: ${cause.message}`);
          e.cause = cause;
          self[INTERNAL].fail(e);
          reject(e);
        } else if (message.protocol !== PROTOCOL) {
          reject(ctxguardError('WORKER_FAILED', `the worker speaks protocol ${message.protocol}, this page ${PROTOCOL}: load ctxguard/worker and ctxguard/worker/serve from the same package`));
        } else {
          state.version = message.version;
          resolve();
        }
      };
      state.onFatal = (e) => {
        clearTimeout(timer);
        reject(e);
      };
    });
    state.ready.catch(() => {});

    const fatal = (message) => {
      const e = ctxguardError('WORKER_FAILED', message);
      state.onFatal(e);
      state.fail(e);
    };
    // Before it serves, any error means the worker will never serve. After, an uncaught error in
    // a Web Worker's own code is the worker's business (it is still serving); in Node it ends the
    // thread.
    const early = (detail) => {
      if (state.version === null) fatal(`the worker failed${detail ? `: ${detail}` : ' to load or threw before serving (see the console)'}`);
    };
    const node = typeof worker.on === 'function'; // a worker_threads Worker (an EventEmitter)
    const handlers = node
      ? {
        message: (data) => this.#receive(data),
        error: (error) => fatal(`the worker thread failed: ${error?.message ?? error}`),
        exit: (code) => fatal(`the worker thread exited (code ${code})`),
      }
      : {
        message: (event) => this.#receive(event.data),
        error: (event) => early(event?.message),
        messageerror: () => early('a message from the worker could not be deserialized'),
      };
    const [add, remove] = node ? ['on', 'off'] : ['addEventListener', 'removeEventListener'];
    for (const [type, fn] of Object.entries(handlers)) worker[add](type, fn);
    state.detach = () => {
      for (const [type, fn] of Object.entries(handlers)) worker[remove](type, fn);
    };

    state.fail = (error) => {
      if (state.closed) return;
      state.closed = error;
      state.detach();
      connections.delete(worker);
      for (const call of state.pending.values()) call.reject(error);
      state.pending.clear();
      for (const s of state.summaries.values()) s.controller.abort(error);
      state.summaries.clear();
    };
    state.call = (request, extra) => this.#call(request, extra);
  }

  /** The ctxguard version the worker runs. */
  get version() {
    return this[INTERNAL].version;
  }

  /** The Worker this connection talks to. */
  get worker() {
    return this[INTERNAL].worker;
  }

  /** What the transfers cost so far, and what the worker keeps. */
  get transferStats() {
    const s = this[INTERNAL];
    return { ...s.stats, storedMessages: s.kept.size, storedChars: s.kept.chars };
  }

  /** A ContextGuard in the worker. Rejects with ctxguard's error for an invalid config. */
  async createGuard(config) {
    const s = this[INTERNAL];
    const gid = ++s.ids.guard;
    const { budget, model, sourceLimits } = await this.#call({ t: 'guard', gid }, { config });
    return new WorkerGuard(this, gid, budget, model, sourceLimits);
  }

  countMessages(messages, options) {
    return this.#call({ t: 'call', method: 'countMessages' }, { messages, options });
  }

  countTokens(text, options) {
    return this.#fn('countTokens', [payloadOf(text)], options);
  }

  modelInfo(model) {
    return this.#fn('modelInfo', [payloadOf(model)]);
  }

  knownModels() {
    return this.#fn('knownModels', []);
  }

  /** Loads a vocabulary in the worker (its counts become exact there): a name, model id or bytes. */
  loadVocabulary(what) {
    const bytes = what instanceof ArrayBuffer || ArrayBuffer.isView(what);
    return this.#fn('loadVocabulary', [bytes ? { o: what } : payloadOf(what)]);
  }

  compactToolOutput(text, options) {
    return this.#fn('compactToolOutput', [payloadOf(text)], options);
  }

  previewAttachment(text, options) {
    return this.#fn('previewAttachment', [payloadOf(text)], options);
  }

  readAttachment(source, options) {
    // A Map is read as a Map: structured clone keeps it.
    return this.#fn('readAttachment', [source instanceof Map ? { o: source } : payloadOf(source)], options);
  }

  readAttachmentTool(options) {
    return this.#fn('readAttachmentTool', [], options);
  }

  resolveHistory(turns, options) {
    return this.#fn('resolveHistory', [payloadOf(turns)], options);
  }

  classifyProviderError(error) {
    return this.#fn('classifyProviderError', [providerErrorData(error)]);
  }

  listAttachments(messages, options) {
    return this.#fn('listAttachments', [payloadOf(messages)], options);
  }

  detectFormat(messagesOrRequest) {
    return this.#fn('detectFormat', [payloadOf(messagesOrRequest)]);
  }

  /**
   * A method the worker added with serveGuard({ methods }): `fn(arg, { api, messages, guard,
   * progress, signal })`. `messages` travels like a guard call's (only what the worker has not seen).
   * @param {string} name
   * @param {unknown} arg
   * @param {{ messages?: unknown, signal?: AbortSignal, onProgress?: (e: unknown) => void }} [options]
   */
  call(name, arg, { messages, signal, onProgress } = {}) {
    return this.#call(
      { t: 'call', method: String(name), custom: true },
      { args: [payloadOf(arg)], messages, options: undefined, signal, callbacks: onProgress ? { onProgress } : {} },
    );
  }

  /** Stops the worker. Pending calls reject with WORKER_TERMINATED; so does every later call. */
  terminate() {
    const s = this[INTERNAL];
    s.fail(ctxguardError('WORKER_TERMINATED', 'the worker was terminated'));
    return s.worker.terminate();
  }

  #fn(method, args, options) {
    return this.#call({ t: 'call', method }, options === undefined ? { args } : { args, fnOptions: options });
  }

  /**
   * Sends one request. `extra`: messages (delta-encoded), options (with callbacks), config,
   * args (payloads), fnOptions (a free function's options, after args), signal, callbacks.
   * @param {Record<string, unknown>} request
   * @param {{ messages?: unknown, messagesKey?: unknown, options?: unknown, config?: unknown, args?: unknown[], fnOptions?: unknown, signal?: AbortSignal, callbacks?: Record<string, Function> }} [extra]
   */
  #call(request, extra = {}) {
    const s = this[INTERNAL];
    if (s.closed) return Promise.reject(s.closed);
    const id = ++s.ids.call;
    const slots = []; // payloads sent by structured clone, to re-encode as JSON if cloning fails
    const t0 = now();
    /** @type {Record<string, unknown>} */
    const message = { ...request, id };
    const callbacks = { ...(extra.callbacks ?? {}) };
    let signal = extra.signal;
    let undo = () => {};
    if ('config' in extra) message.config = this.#options(extra.config, slots, {}).wire;
    if ('options' in extra) {
      const o = this.#options(extra.options, slots, callbacks, extra.messagesKey);
      message.options = o.wire;
      signal ??= o.signal;
    }
    if ('messages' in extra && extra.messages !== undefined) {
      const m = this.#messages(extra.messages, slots);
      message.messages = m.wire;
      undo = m.undo;
      s.stats.lastCall = { messages: m.count, sent: m.sent, reused: m.reused, chars: m.chars, encodeMs: 0, postMs: 0 };
    }
    if (extra.args) message.args = extra.args;
    if ('fnOptions' in extra) message.args = [...(extra.args ?? []), { opts: this.#options(extra.fnOptions, slots, {}).wire }];
    if (signal) message.signal = { aborted: signal.aborted, reason: signal.aborted ? reasonData(signal.reason) : undefined };

    return new Promise((resolve, reject) => {
      const call = { resolve, reject, callbacks, signal, summaries: new Set(), onAbort: null };
      const t1 = now();
      try {
        post(s.worker, message, slots);
      } catch (e) {
        undo();
        reject(e?.name === 'DataCloneError' ? ctxguardError('INVALID_OPTIONS', `a value cannot be sent to the worker: ${e.message}`) : e);
        return;
      }
      if (message.messages && s.stats.lastCall) {
        s.stats.lastCall.encodeMs = t1 - t0;
        s.stats.lastCall.postMs = now() - t1;
      }
      s.stats.calls++;
      s.pending.set(id, call);
      if (signal && !signal.aborted) {
        call.onAbort = () => {
          // The caller's reason, as is, for the summarizer running here; the worker aborts its call.
          for (const sid of call.summaries) s.summaries.get(sid)?.controller.abort(signal.reason);
          try {
            s.worker.postMessage({ t: 'abort', id, reason: reasonData(signal.reason) });
          } catch {
            // The worker is gone: the call has already been rejected.
          }
        };
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
    });
  }

  /** The options wire: plain fields as payloads, callbacks as flags (kept here), an AbortSignal as a flag. */
  #options(opts, slots, callbacks, skipKey) {
    if (opts === undefined) return { wire: undefined };
    if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) return { wire: { raw: optionPayload(opts) } };
    const fields = [];
    const flags = {};
    let signal;
    for (const key of Object.keys(opts)) {
      if (key === skipKey) continue;
      const v = opts[key];
      if (key in CALLBACKS && typeof v === 'function') {
        flags[key] = true;
        callbacks[key] = v;
      } else if (key === 'signal' && isSignal(v)) {
        flags.signal = true;
        signal = v;
      } else {
        const payload = optionPayload(v);
        if ('o' in payload || 'c' in payload) slots.push([payload, v]);
        fields.push([key, payload]);
      }
    }
    return { wire: { fields, callbacks: flags }, signal };
  }

  /** The messages wire: ids of messages the worker has, payloads of the others, ids it may forget. */
  #messages(messages, slots) {
    const s = this[INTERNAL];
    if (!Array.isArray(messages)) {
      const whole = payloadOf(messages);
      if ('o' in whole || 'c' in whole) slots.push([whole, messages]);
      return { wire: { whole }, count: 0, sent: 1, reused: 0, chars: 0, undo: () => {} };
    }
    const { sent: known, kept } = s;
    kept.begin();
    // A toJSON every object inherits makes no message plain data: none is named by id.
    const reuse = !inheritedToJSON();
    const items = new Array(messages.length);
    const fresh = [];
    const drop = [];
    let sent = 0;
    let reused = 0;
    let chars = 0;
    let callChars = 0;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m === null || typeof m !== 'object') {
        items[i] = payloadOf(m);
        continue;
      }
      const previous = known.get(m);
      let rec;
      try {
        const same = reuse && previous !== undefined && kept.holds(previous.id) ? known.unchanged(m) : undefined;
        rec = same ?? SentMessages.record(m, s.ids.message + 1);
      } catch {
        // A throwing getter or Proxy trap: not plain data (the faithful copy reports it).
        rec = null;
      }
      if (rec === null) {
        // Not plain data: a faithful copy, every time (not remembered).
        items[i] = payloadOf(m);
        slots.push([items[i], m]);
        sent++;
        continue;
      }
      callChars += rec.chars;
      if (rec === previous) {
        kept.touch(rec.id);
        items[i] = rec.id;
        reused++;
        continue;
      }
      // Changed since it was sent: the worker forgets the old version.
      if (previous !== undefined && kept.remove(previous.id)) drop.push(previous.id);
      s.ids.message = rec.id;
      known.remember(m, rec);
      kept.add(rec.id, rec.chars);
      fresh.push([m, previous]);
      items[i] = { id: rec.id, o: m };
      slots.push([items[i], m]);
      sent++;
      chars += rec.chars;
    }
    kept.evict(callChars, drop);
    s.stats.messagesSent += sent;
    s.stats.messagesReused += reused;
    s.stats.charsSent += chars;
    const undo = () => {
      // The worker never got this call: forget what it would have stored.
      for (const [m, previous] of fresh) {
        const rec = known.get(m);
        if (rec) kept.remove(rec.id);
        if (previous) known.remember(m, previous);
        else known.forget(m);
      }
    };
    return { wire: { items, drop }, count: messages.length, sent, reused, chars, undo };
  }

  #receive(message) {
    const s = this[INTERNAL];
    if (!message || typeof message !== 'object') return;
    switch (message.t) {
      case 'ready':
        s.onReady(message);
        return;
      case 'res': {
        const call = s.pending.get(message.id);
        if (!call) return;
        s.pending.delete(message.id);
        if (call.onAbort) call.signal.removeEventListener('abort', call.onAbort);
        if (message.ok && startedAhead(message.value)) {
          // Its summarizer calls (maybe under way already) go on after the result.
          s.background.set(message.id, call);
          // At most a few: one starts per compaction, and a host without onTrace never hears
          // that it ended.
          if (s.background.size > 4) s.background.delete(s.background.keys().next().value);
        } else {
          for (const sid of call.summaries) s.summaries.delete(sid);
        }
        if (message.ok) call.resolve(message.value);
        else call.reject(errorWith(message.error));
        return;
      }
      case 'ev': {
        const fn = (s.pending.get(message.id) ?? s.background.get(message.id))?.callbacks[EVENT_CALLBACK[message.k]];
        if (typeof fn === 'function') notify(fn, message.a);
        if (endedAhead(message.a)) s.background.delete(message.id);
        return;
      }
      case 'sum':
        this.#summarize(message);
        return;
      case 'sumabort': {
        const entry = s.summaries.get(message.sid);
        if (entry) {
          s.summaries.delete(message.sid);
          entry.controller.abort(reasonFrom(message.reason));
        }
        return;
      }
      default:
    }
  }

  /** Runs the host's summarizer here for the worker's pipeline, and sends its answer back. */
  #summarize({ id, sid, request }) {
    const s = this[INTERNAL];
    const call = s.pending.get(id) ?? s.background.get(id);
    const reply = (body, value) => {
      if (!s.summaries.has(sid)) return; // the worker gave up on it (timeout, abort)
      s.summaries.delete(sid);
      const message = { t: 'sumres', sid, ...body };
      try {
        post(s.worker, message, body.ok ? [[body.value, value]] : []);
      } catch {
        // The worker is gone: the call has already been rejected.
      }
    };
    const controller = new AbortController();
    s.summaries.set(sid, { controller, call });
    if (!call || typeof call.callbacks.summarize !== 'function') {
      reply({ ok: false, thrown: thrownData(new Error('no summarizer for this call')) });
      return;
    }
    call.summaries.add(sid);
    if (call.signal?.aborted) controller.abort(call.signal.reason);
    let pending;
    try {
      pending = Promise.resolve(call.callbacks.summarize({ ...request, signal: controller.signal }));
    } catch (e) {
      pending = Promise.reject(e);
    }
    pending.then(
      (value) => reply({ ok: true, value: payloadOf(value) }, value),
      (error) => reply({ ok: false, thrown: thrownData(error) }),
    );
  }
}

/** Whether a prepare result started a summary ahead of time (its trace says so). */
function startedAhead(result) {
  return Array.isArray(result?.traces) && result.traces.some((t) => t?.operation === 'summary_compact' && t.ahead === true && t.status === 'in_progress');
}

/** Whether an event is the trace of a summary made ahead of time that ended. */
function endedAhead(a) {
  return a?.operation === 'summary_compact' && a.ahead === true && (a.status === 'completed' || a.status === 'fallback');
}

/** postMessage; when structured clone refuses a value, its payloads are re-sent as JSON text. */
function post(worker, message, slots) {
  try {
    worker.postMessage(message);
  } catch (e) {
    if (e?.name !== 'DataCloneError' || slots.length === 0) throw e;
    for (const [payload, value] of slots) {
      delete payload.o;
      delete payload.c;
      delete payload.m;
      Object.assign(payload, jsonPayload(value));
    }
    worker.postMessage(message);
  }
}

/** A ContextGuard living in a worker: the same methods, asynchronous. */
export class WorkerGuard {
  #connection;
  #gid;
  #freed = false;

  constructor(connection, gid, budget, model, sourceLimits) {
    this.#connection = connection;
    this.#gid = gid;
    /** The budget (as `ContextGuard.budget`). */
    this.budget = budget;
    /** What the model name resolved to (as `ContextGuard.model`). */
    this.model = model;
    /** The source-guard limits in force (as `ContextGuard.sourceLimits`). */
    this.sourceLimits = sourceLimits;
  }

  /** The guard's id in its worker (for methods added with serveGuard: `guard(id)`). */
  get id() {
    return this.#gid;
  }

  /** The connection to the worker (WorkerConnection): free functions, custom methods, transfer stats. */
  get worker() {
    return this.#connection;
  }

  #call(method, extra) {
    if (this.#freed) return Promise.reject(ctxguardError('GUARD_FREED', 'this guard was freed'));
    return this.#connection[INTERNAL].call({ t: 'call', gid: this.#gid, method }, extra);
  }

  measure(messages, options) {
    return this.#call('measure', { messages, options });
  }

  guardSources(messages, options) {
    return this.#call('guardSources', { messages, options });
  }

  prepare(messages, options) {
    return this.#call('prepare', { messages, options });
  }

  settle(messages, options) {
    return this.#call('settle', { messages, options });
  }

  countMessages(messages, options) {
    return this.#connection.countMessages(messages, options);
  }

  observeUsage(args) {
    const plain = args !== null && typeof args === 'object' && !Array.isArray(args);
    return this.#call('observeUsage', plain ? { messages: args.messages, options: args, messagesKey: 'messages' } : { options: args });
  }

  /** `guard.observeOverflow(error, messages, options)`: the error travels as the fields it is read by. */
  observeOverflow(error, messages, options) {
    return this.#call('observeOverflow', { messages, options, args: [providerErrorData(error)] });
  }

  /** `guard.cacheStats`, asynchronously. */
  cacheStats() {
    return this.#call('cacheStats', {});
  }

  /** `guard.calibration`, asynchronously. */
  calibration() {
    return this.#call('calibration', {});
  }

  /** `guard.calibration = state`; rejects with INVALID_OPTIONS as the setter throws. */
  setCalibration(state) {
    return this.#call('setCalibration', { args: [payloadOf(state)] });
  }

  /** `guard.restore(checkpoint)`, asynchronously. */
  restore(checkpoint) {
    return this.#call('restore', { args: [payloadOf(checkpoint)] });
  }

  /** `guard.resetBreaker()`, asynchronously. */
  resetBreaker() {
    return this.#call('resetBreaker', {});
  }

  /** Frees the guard in the worker (after its pending calls). Later calls reject with GUARD_FREED. */
  free() {
    if (this.#freed) return;
    this.#freed = true;
    try {
      this.#connection.worker.postMessage({ t: 'free', gid: this.#gid });
    } catch {
      // The worker is gone already.
    }
  }

  /** Stops the worker (every guard on it). Pending and later calls reject with WORKER_TERMINATED. */
  terminate() {
    return this.#connection.terminate();
  }
}
