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

/**
 * The error of a browser or worker entry whose WebAssembly module could not be loaded from `url`
 * (`cause`: what fetch or instantiation threw), saying what to do about it.
 */
export function wasmUnavailable(url, cause) {
  const why = cause?.message ?? String(cause);
  const node = typeof process === 'object' && typeof process?.versions?.node === 'string';
  let hint;
  if (url.protocol === 'file:' && node) {
    hint = "this is ctxguard's browser entry; in Node, `import 'ctxguard'` resolves to the Node entry by the `node` export condition, which a test runner or bundler that resolves the `browser` condition in Node (Jest's jsdom environment, for one) has to keep";
  } else if (url.protocol === 'file:') {
    hint = 'this runtime cannot fetch files: ctxguard fetches its .wasm from next to its module';
  } else {
    hint = 'serve ctxguard_wasm_bg.wasm next to the module that imports it, as application/wasm (bundlers copy it by itself; a Vite app needs no configuration)';
  }
  return ctxguardError('WASM_UNAVAILABLE', `ctxguard could not load its WebAssembly module from ${url.href} (${why}): ${hint}`);
}
