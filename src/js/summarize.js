// The summarizer call, with its timeout, heartbeats and abort, in plain JS promises: the Rust
// binding awaits `callSummarizer`, which never rejects and leaves no timer behind.
//
// Resolves to { ok: true, value } or { ok: false, reason: 'timeout' | 'callback_error' |
// 'aborted', message }. A callback that throws synchronously, rejects (with anything), or
// settles after the timeout or the abort is handled; its late result is ignored.

const now = () => (globalThis.performance?.now ? globalThis.performance.now() : Date.now());
/** setTimeout fires at once for a delay above 2^31 - 1 ms (about 24.8 days): longer waits are that long. */
const MAX_DELAY_MS = 2 ** 31 - 1;

function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return 'a value that cannot be printed';
  }
}

function safe(fn, arg) {
  if (typeof fn !== 'function') return;
  try {
    fn(arg);
  } catch {
    // Observer callbacks must not break the pipeline.
  }
}

/** Removes an abort listener; a signal-like object whose removeEventListener throws cannot break the pipeline. */
function unlisten(signal, listener) {
  try {
    if (signal) signal.removeEventListener('abort', listener);
  } catch {
    // Nothing to clean up then.
  }
}

export function callSummarizer(summarize, request, timeoutMs, heartbeatMs, onProgress, signal, attempt, startedMs) {
  return new Promise((resolve) => {
    const controller = new AbortController();
    let settled = false;
    let timer;
    let beat;
    const onAbort = () => {
      controller.abort(signal.reason);
      finish({ ok: false, reason: 'aborted', message: 'the caller aborted the signal' });
    };
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(beat);
      resolve(result);
      unlisten(signal, onAbort);
    };
    if (signal && signal.aborted) {
      finish({ ok: false, reason: 'aborted', message: 'the signal was already aborted' });
      return;
    }
    timer = setTimeout(() => {
      controller.abort(new Error(`ctxguard: summarize timed out after ${timeoutMs} ms`));
      finish({ ok: false, reason: 'timeout', message: `no answer within ${timeoutMs} ms` });
    }, Math.min(timeoutMs, MAX_DELAY_MS));
    if (heartbeatMs > 0) {
      beat = setInterval(() => {
        safe(onProgress, { operation: 'summary_compact', status: 'in_progress', elapsedMs: Math.round(now() - startedMs), attempt });
      }, heartbeatMs);
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    let pending;
    try {
      pending = Promise.resolve(summarize({ ...request, attempt, signal: controller.signal }));
    } catch (error) {
      finish({ ok: false, reason: 'callback_error', message: describe(error) });
      return;
    }
    pending.then(
      (value) => finish({ ok: true, value }),
      (error) => finish({ ok: false, reason: 'callback_error', message: describe(error) }),
    );
  });
}

/**
 * The pause before attempt `attempt`: resolves true after `ms`, or false at once when `signal`
 * aborts (before or during the pause). Heartbeats go on meanwhile (with the attempt it waits
 * for). Leaves no timer or listener behind.
 */
export function pause(ms, signal, heartbeatMs, onProgress, attempt, startedMs) {
  return new Promise((resolve) => {
    if (signal && signal.aborted) {
      resolve(false);
      return;
    }
    let settled = false;
    let timer;
    let beat;
    const done = (waited) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(beat);
      resolve(waited);
      unlisten(signal, onAbort);
    };
    const onAbort = () => done(false);
    timer = setTimeout(() => done(true), Math.min(ms, MAX_DELAY_MS));
    if (heartbeatMs > 0) {
      beat = setInterval(() => {
        safe(onProgress, { operation: 'summary_compact', status: 'in_progress', elapsedMs: Math.round(now() - startedMs), attempt });
      }, heartbeatMs);
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls an observer callback (onTrace, onProgress, logger), ignoring what it throws. */
export function notify(fn, arg) {
  safe(fn, arg);
}
