// Types of `ctxguard/worker/serve`: the worker side of `ctxguard/worker`. Importing it in a
// dedicated Web Worker (or a Node worker thread) serves ctxguard to the main thread.
import type * as ctxguard from './index.js';
import type { WireMessage } from './index.js';

/** What a custom method gets next to its argument. */
export interface MethodContext {
  /** The ctxguard package, initialized, in the worker. */
  api: typeof ctxguard;
  /** The conversation passed with `call(name, arg, { messages })`. */
  messages: WireMessage[] | undefined;
  /** The ContextGuard behind a `WorkerGuard` (by its `id`). */
  guard(id: number): ctxguard.ContextGuard;
  /** Sends an event to the caller's `onProgress`. */
  progress(event: unknown): void;
  /** Aborted when the caller's signal aborts. */
  signal: AbortSignal | undefined;
}

/** `arg` is whatever the caller passed (typed `never` here so that any parameter type is accepted). */
export type WorkerMethod = (arg: never, ctx: MethodContext) => unknown;

/**
 * Starts serving (it already does when the module is loaded in a worker) and adds `methods`
 * the main thread can call with `WorkerConnection.call(name, arg, options)`. Resolves once ctxguard is
 * loaded in the worker; rejects with the reason it could not be.
 */
export function serveGuard(options?: { methods?: { [name: string]: WorkerMethod } }): Promise<void>;
