// The one place a JS-side error is made: a real Error (`instanceof Error`, a stack) with the
// `name`, `code` and `index` the caller reads. ctxguard's own are `CtxguardError` with a stable
// `code` (the table in docs/api.md); the worker helper also rebuilds any error that crossed from
// the worker (`errorWith` of its data). Pure JS, no wasm: the main-thread worker module uses it.

/** An Error with `data`'s message and name (else 'Error') and, where given, its code and index. */
export function errorWith(data) {
  const e = /** @type {Error & { code?: string, index?: number }} */ (new Error(data?.message ?? 'unknown error'));
  e.name = data?.name ?? 'Error';
  if (data?.code !== undefined) e.code = data.code;
  if (data?.index !== undefined) e.index = data.index;
  return e;
}

/** A `CtxguardError` with a stable `code` (GUARD_FREED, INVALID_OPTIONS, WORKER_FAILED...). */
export function ctxguardError(code, message) {
  return errorWith({ name: 'CtxguardError', message, code });
}
