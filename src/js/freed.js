// A ContextGuard used after `guard.free()`: wasm-bindgen's generated methods would throw a bare
// "null pointer passed to rust" Error. Every method and accessor of the class first checks that
// the guard is alive and otherwise throws (or, for the async methods, rejects with) a
// CtxguardError with the stable code GUARD_FREED. `free()` itself may be called again.

import { ctxguardError } from './errors.js';
import { ASYNC_METHODS } from './surface.js';

const ASYNC = new Set(ASYNC_METHODS);

const freedError = () => ctxguardError('GUARD_FREED', 'this ContextGuard was freed (guard.free()); create a new one');

/** Wrap every method and accessor of `Guard.prototype`; `free` becomes a no-op on a freed guard. */
export function checkFreed(Guard) {
  const proto = Guard.prototype;
  const alive = (self) => typeof self?.__wbg_ptr !== 'number' || self.__wbg_ptr !== 0;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || name.startsWith('__')) continue;
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === 'free' && typeof d.value === 'function') {
      const free = d.value;
      d.value = {
        free() {
          if (alive(this)) free.call(this);
        },
      }.free;
    } else if (typeof d.value === 'function') {
      const f = d.value;
      const isAsync = ASYNC.has(name);
      d.value = {
        [name](...args) {
          if (!alive(this)) {
            if (isAsync) return Promise.reject(freedError());
            throw freedError();
          }
          return f.apply(this, args);
        },
      }[name];
    } else {
      for (const k of ['get', 'set']) {
        const f = d[k];
        if (typeof f !== 'function') continue;
        d[k] = function (...args) {
          if (!alive(this)) throw freedError();
          return f.apply(this, args);
        };
      }
    }
    Object.defineProperty(proto, name, d);
  }
}
