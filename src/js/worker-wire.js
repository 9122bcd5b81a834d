// What crosses the boundary between the main thread (worker.js) and the worker (worker-host.js):
// values and errors. Pure JS, no wasm, no DOM: shared by both sides.
//
// A value is sent as one of these "payloads", so that ctxguard in the worker reads exactly what
// ctxguard on the main thread would have read — the same JSON, the same errors:
//   { o: value }          structured clone of plain data (objects, arrays, strings, numbers...)
//   { c: copy, m: marks } a value structured clone would change or refuse, as a copy that it
//                         carries (built-ins such as Date or Map as they are, class instances as
//                         their own fields) plus marks for what the worker puts back in place:
//                         functions, symbols, and objects with toJSON (rebuilt with a toJSON that
//                         answers what the original's answered)
//   { j: text }           JSON text (when structured clone refuses even the copy: a Proxy...)
//   { p: message }        JSON.stringify threw (a cycle, a BigInt): the worker gets a value whose
//                         toJSON throws the same message, so ctxguard reports the same error there
//   { f: 1 } / { s: d }   a function / a symbol (an option ctxguard must reject as it is)

import { errorWith } from './errors.js';
import { snapshot } from './json.js';

export const PROTOCOL = 1;

/**
 * Whether `value` is plain data (json.js `snapshot`: structured clone gives it back as
 * JSON.stringify reads it); a throwing getter or Proxy trap is not (the faithful copy reports it).
 */
function isPlain(value) {
  try {
    return snapshot(value, []) >= 0;
  } catch {
    return false;
  }
}

/** The payload of a value that is not plain data: its JSON text, or the error JSON.stringify threw. */
export function jsonPayload(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? { o: undefined } : { j: text };
  } catch (e) {
    return { p: String(e?.message ?? e) };
  }
}

/** The payload of any value: plain data as is, anything else as a faithful copy (see the top of the file). */
export function payloadOf(value) {
  if (typeof value === 'function') return { f: 1 };
  if (typeof value === 'symbol') return { s: value.description ?? '' };
  return isPlain(value) ? { o: value } : faithfulPayload(value);
}

const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);

/**
 * A copy of `value` that structured clone carries without changing what JSON.stringify (or a
 * check of the data) makes of it: plain objects, arrays and class instances are copied (own
 * enumerable fields, shared references and cycles kept), built-ins (Date, Map, typed arrays...)
 * are left to structured clone, and functions, symbols and objects with toJSON become marks.
 */
export function faithfulPayload(value) {
  const marks = [];
  const copies = new Map();
  const copy = (v, path) => {
    if (typeof v === 'function') {
      marks.push([path, 'f']);
      return null;
    }
    if (typeof v === 'symbol') {
      marks.push([path, 's', v.description ?? '']);
      return null;
    }
    if (v === null || typeof v !== 'object') return v;
    if (copies.has(v)) return copies.get(v);
    if (Array.isArray(v)) {
      const out = new Array(v.length);
      copies.set(v, out);
      for (let i = 0; i < v.length; i++) if (i in v) out[i] = copy(v[i], [...path, i]);
      return out;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null && tagOf(v) !== 'Object') return v; // a built-in
    if (typeof v.toJSON === 'function') {
      let inner;
      try {
        inner = payloadOf(v.toJSON(path.length ? String(path[path.length - 1]) : ''));
      } catch (e) {
        inner = { p: String(e?.message ?? e) };
      }
      marks.push([path, 'j', inner]);
      return null;
    }
    const out = {};
    copies.set(v, out);
    for (const key of Object.keys(v)) out[key] = copy(v[key], [...path, key]);
    return out;
  };
  try {
    return { c: copy(value, []), m: marks };
  } catch {
    // A throwing getter, or nesting deeper than the stack: JSON.stringify reports the same.
    return jsonPayload(value);
  }
}

/** The value a payload stands for, on the receiving side. */
export function valueOf(payload) {
  if (payload === null || typeof payload !== 'object') return payload;
  if ('o' in payload) return payload.o;
  if ('c' in payload) return restore(payload.c, payload.m);
  if ('j' in payload) return JSON.parse(payload.j);
  if ('p' in payload) return poison(payload.p);
  if ('f' in payload) return function unsupported() {};
  if ('s' in payload) return Symbol(payload.s);
  return undefined;
}

/** A value whose toJSON throws `message`: JSON.stringify fails there as it did here. */
function poison(message) {
  return {
    toJSON() {
      throw new TypeError(message);
    },
  };
}

/** The faithful copy with its marks put back: functions, symbols, objects with toJSON. */
function restore(root, marks) {
  let out = root;
  for (const [path, kind, arg] of marks) {
    let v;
    if (kind === 'f') v = function unsupported() {};
    else if (kind === 's') v = Symbol(arg);
    else if ('p' in arg) v = valueOf(arg);
    else {
      const inner = valueOf(arg);
      v = { toJSON: () => inner };
    }
    if (path.length === 0) {
      out = v;
      continue;
    }
    let at = out;
    for (let i = 0; i < path.length - 1; i++) at = at[path[i]];
    at[path[path.length - 1]] = v;
  }
  return out;
}

/** An error as data: name, message, and ctxguard's code and index when it has them. */
export function errorData(error) {
  if (error !== null && typeof error === 'object' && typeof error.message === 'string') {
    const data = { name: typeof error.name === 'string' ? error.name : 'Error', message: error.message };
    if (error.code !== undefined && error.code !== null) data.code = typeof error.code === 'number' ? error.code : String(error.code);
    if (typeof error.index === 'number') data.index = error.index;
    return data;
  }
  return { name: 'Error', message: printable(error), thrown: true };
}

/** What `String(value)` prints, or the summarizer runtime's words for a value that cannot be printed. */
export function printable(value) {
  try {
    return String(value);
  } catch {
    return 'a value that cannot be printed';
  }
}

/**
 * What a summarizer threw or rejected with, as data: an Error (name and message, as the
 * summarizer runtime describes it) or any other value (as String() prints it).
 */
export function thrownData(error) {
  return error instanceof Error ? { error: errorData(error) } : { text: printable(error) };
}

/** The value to reject with on the worker side, described there exactly as `error` was. */
export function thrownValue(data) {
  return data?.error ? errorWith(data.error) : data?.text;
}

/** An abort reason as data: Errors (and DOMExceptions) by name and message, plain data as is. */
export function reasonData(reason) {
  if (reason instanceof Error || (reason && typeof reason === 'object' && typeof reason.name === 'string' && typeof reason.message === 'string')) {
    return { error: errorData(reason) };
  }
  return isPlain(reason) ? { value: reason } : { text: printable(reason) };
}

export function reasonFrom(data) {
  if (data?.error) return errorWith(data.error);
  return 'value' in (data ?? {}) ? data.value : data?.text;
}
