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

/**
 * A wait of `ms`: a timer, heartbeats every `heartbeatMs` (0: none) and a listener on `signal`.
 * `onEnd('timer' | 'abort')` is called once, after all three are cleared; the returned `stop`
 * clears them without calling it (both idempotent).
 */
function watch(ms, signal, beat, onEnd) {
  const { heartbeatMs, onProgress, attempt, startedMs, ahead } = beat;
  let over = false;
  let interval;
  const stop = () => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    clearInterval(interval);
    unlisten(signal, onAbort);
  };
  const end = (why) => {
    if (over) return;
    stop();
    onEnd(why);
  };
  const onAbort = () => end('abort');
  const timer = setTimeout(() => end('timer'), Math.min(ms, MAX_DELAY_MS));
  if (heartbeatMs > 0) {
    interval = setInterval(() => {
      const progress = { operation: 'summary_compact', status: 'in_progress', elapsedMs: Math.round(now() - startedMs), attempt };
      safe(onProgress, ahead ? { ...progress, ahead: true } : progress);
    }, heartbeatMs);
  }
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  return stop;
}

/**
 * One attempt of `summarize(request)` within `timeoutMs`. `beat`: `{ heartbeatMs, onProgress,
 * attempt, startedMs, ahead }`, the heartbeats meanwhile (`ahead`: a summary made ahead of time,
 * in the background; its heartbeats say so).
 */
export function callSummarizer(summarize, request, timeoutMs, signal, beat) {
  const { attempt } = beat;
  return new Promise((resolve) => {
    if (signal && signal.aborted) {
      resolve({ ok: false, reason: 'aborted', message: 'the signal was already aborted' });
      return;
    }
    const controller = new AbortController();
    let settled = false;
    let stop = () => {};
    const finish = (result) => {
      if (settled) return;
      settled = true;
      stop();
      resolve(result);
    };
    stop = watch(timeoutMs, signal, beat, (why) => {
      if (why === 'abort') {
        controller.abort(signal.reason);
        finish({ ok: false, reason: 'aborted', message: 'the caller aborted the signal' });
      } else {
        controller.abort(new Error(`ctxguard: summarize timed out after ${timeoutMs} ms`));
        finish({ ok: false, reason: 'timeout', message: `no answer within ${timeoutMs} ms` });
      }
    });
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
 * The pause before attempt `beat.attempt`: resolves true after `ms`, or false at once when `signal`
 * aborts (before or during the pause). Heartbeats go on meanwhile (with the attempt it waits
 * for). Leaves no timer or listener behind.
 */
export function pause(ms, signal, beat) {
  return new Promise((resolve) => {
    if (signal && signal.aborted) {
      resolve(false);
      return;
    }
    watch(ms, signal, beat, (why) => resolve(why === 'timer'));
  });
}

/**
 * The controller of a summary made ahead of time: it aborts when `signal` (the starting call's,
 * if any) aborts, and when the guard is freed (`abortController`).
 */
export function linkedController(signal) {
  const controller = new AbortController();
  if (signal) {
    if (signal.aborted) controller.abort(signal.reason);
    else {
      try {
        signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
      } catch {
        // A signal-like object that cannot be listened to: only free() aborts then.
      }
    }
  }
  return controller;
}

export function abortController(controller) {
  try {
    controller.abort(new Error('ctxguard: the guard was freed'));
  } catch {
    // Nothing to abort then.
  }
}

export function signalOf(controller) {
  return controller.signal;
}

/** Calls an observer callback (onTrace, onProgress, logger), ignoring what it throws. */
export function notify(fn, arg) {
  safe(fn, arg);
}
