// What ctxguard takes as message data: JSON values. One module for the questions every reader of
// JS values asks — is this plain JSON data, how deep may it nest, are its strings well-formed —
// answered once, for the three places that ask them:
//   - `findNonJson`: what JSON would silently change, found before the binding reads a value
//     (src/wasm/convert.rs calls it);
//   - `snapshot` and `matches`: the structural snapshot of a message the stored path and the
//     worker transfer remember, and the check that a message still holds it
//     (src/js/sent-messages.js; docs/stored-calls.md);
//   - `inheritedToJSON`: a `toJSON` every object inherits (the packed transfer and the
//     remembered messages are then not used).
// This file imports nothing: wasm-bindgen copies it alone into the package as a snippet of the
// binding (`#[wasm_bindgen(module = "/src/js/json.js")]`); scripts/finish-pkg.mjs also ships it
// next to the modules that import it.

const objectProto = Object.prototype;
const arrayProto = Array.prototype;
const hasOwn = objectProto.hasOwnProperty;

/** Containers nested deeper than this are not plain data (the slow, faithful way reads them). */
const MAX_DEPTH = 64;

/** Whether a string is well-formed UTF-16 (a lone surrogate is repaired on the way into wasm). */
const wellFormed =
  typeof String.prototype.isWellFormed === 'function' ? (s) => s.isWellFormed() : (s) => !/[\uD800-\uDFFF]/.test(s);

/**
 * The plain-data rule for an object (not null, not an array): an object that JSON reads as its
 * own fields and structured clone copies as it is has the prototype `Object.prototype` or none
 * (an object of another realm, a class instance or a built-in has another).
 */
export function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === objectProto || proto === null;
}

/** The same rule for an array (`Array.isArray(v)`): this realm's arrays, not a subclass's. */
const isPlainArray = (v) => Object.getPrototypeOf(v) === arrayProto;

/** Whether every object would answer JSON with an inherited `toJSON` (then no value here is plain). */
export function inheritedToJSON() {
  for (const proto of /** @type {Array<{ toJSON?: unknown }>} */ ([objectProto, arrayProto, String.prototype, Number.prototype, Boolean.prototype])) {
    if (typeof proto.toJSON === 'function') return true;
  }
  return false;
}

const ARRAY = Symbol('array');
const OBJECT = Symbol('object');

/**
 * Appends the structural snapshot of `value` to `out` — each container as a mark and its length,
 * each key, each leaf value (strings by reference, so no text is copied) — and returns the
 * number of string characters in it (keys included), or -1 when `value` is not plain data: plain
 * objects (without `toJSON`) and arrays at most MAX_DEPTH deep, well-formed strings, numbers,
 * booleans, null and undefined (a function, a symbol or a BigInt is not). Plain data reads back
 * as itself through JSON and through structured clone. A throwing getter or Proxy trap throws.
 */
export function snapshot(value, out) {
  return walk(value, out, 0);
}

function walk(v, out, depth) {
  switch (typeof v) {
    case 'string':
      if (!wellFormed(v)) return -1;
      out.push(v);
      return v.length;
    case 'number':
    case 'boolean':
    case 'undefined':
      out.push(v);
      return 0;
    case 'object':
      break;
    default:
      // function, symbol, bigint
      return -1;
  }
  if (v === null) {
    out.push(null);
    return 0;
  }
  if (depth >= MAX_DEPTH) return -1;
  let chars = 0;
  if (Array.isArray(v)) {
    if (!isPlainArray(v)) return -1;
    out.push(ARRAY, v.length);
    for (let i = 0; i < v.length; i++) {
      const n = walk(v[i], out, depth + 1);
      if (n < 0) return -1;
      chars += n;
    }
    return chars;
  }
  if (!isPlainObject(v) || typeof v.toJSON === 'function') return -1;
  const keys = Object.keys(v);
  out.push(OBJECT, keys.length);
  for (const k of keys) {
    // JSON.stringify would escape a lone surrogate in a key, and wasm repair it.
    if (!wellFormed(k)) return -1;
    out.push(k);
    const n = walk(v[k], out, depth + 1);
    if (n < 0) return -1;
    chars += n + k.length;
  }
  return chars;
}

/**
 * Whether `v` still holds what `snap` recorded from position `at`: the next position, or -1.
 * Strings are compared with ===, so an unchanged message costs a few property reads, not a scan
 * of its text. A throwing getter or Proxy trap throws.
 */
export function matches(v, snap, at) {
  if (v === null || typeof v !== 'object') return Object.is(v, snap[at]) ? at + 1 : -1;
  if (Array.isArray(v)) {
    if (!isPlainArray(v) || snap[at] !== ARRAY || snap[at + 1] !== v.length) return -1;
    let p = at + 2;
    for (let i = 0; i < v.length && p >= 0; i++) p = matches(v[i], snap, p);
    return p;
  }
  if (!isPlainObject(v) || snap[at] !== OBJECT) return -1;
  // for-in over own keys (the order of Object.keys) without allocating the key list.
  let p = at + 2;
  let n = 0;
  for (const k in v) {
    if (!hasOwn.call(v, k)) continue;
    if (snap[p] !== k) return -1;
    p = matches(v[k], snap, p + 1);
    if (p < 0) return -1;
    n++;
  }
  return n === snap[at + 1] ? p : -1;
}

// findNonJson: the binding reads messages with JSON.stringify, which silently changes some JS
// values (a Date becomes its ISO string, a Map or Set becomes {}, a typed array an object of its
// bytes, NaN and ±Infinity become null, undefined or a function inside an array becomes null).
// `findNonJson` finds the first such value before the text is read, so it is an error instead of
// a silent change. It accepts more than plain data — what JSON reads faithfully: plain objects
// (from any realm) and class instances without `toJSON`, URL objects (read as their href),
// arrays, strings, finite numbers, booleans, null; `undefined`, functions and symbols as object
// *fields* are dropped (as JSON.stringify drops them). It has no depth limit (a value nested
// deeper than the stack is left to JSON.stringify), and cycles, throwing getters and proxies are
// left to JSON.stringify, which reports them.

const tagOf = (v) => objectProto.toString.call(v).slice(8, -1);

/**
 * The first value JSON would silently change, as `{ path, kind }` (path: keys and indexes from
 * the top, kind: what was found and what JSON would make of it), or `null` when there is none.
 */
export function findNonJson(value) {
  const seen = new Set();
  try {
    return find(value, seen, true);
  } catch {
    // A throwing proxy or getter, or nesting deeper than the stack: JSON.stringify reports it.
    return null;
  }
}

function problem(v, inArray) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(v) ? null : `${v} (JSON would turn it into null)`;
    case 'bigint':
      return 'a BigInt (JSON cannot represent it)';
    case 'undefined':
    case 'function':
    case 'symbol':
      return inArray ? `${typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`} in an array (JSON would turn it into null)` : null;
    default:
      return null;
  }
}

function find(v, seen, inArray) {
  if (v === null || typeof v !== 'object') {
    const p = problem(v, inArray);
    return p === null ? null : { path: [], kind: p };
  }
  if (seen.has(v)) return null;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = find(v[i], seen, true);
      if (found !== null) {
        found.path.unshift(i);
        return found;
      }
    }
    return null;
  }
  if (!isPlainObject(v)) {
    const tag = tagOf(v);
    // A URL reads as its href, losslessly (the AI SDK takes URL objects for images and files).
    if (tag === 'URL') return null;
    if (tag === 'Date') return { path: [], kind: 'a Date (JSON would turn it into a string)' };
    if (tag === 'Map' || tag === 'Set' || tag === 'WeakMap' || tag === 'WeakSet') return { path: [], kind: `a ${tag} (JSON would turn it into {})` };
    if (ArrayBuffer.isView(v) && tag !== 'DataView') return { path: [], kind: `a ${tag} (JSON would turn it into an object with a field per element)` };
    if (tag === 'ArrayBuffer' || tag === 'SharedArrayBuffer' || tag === 'DataView') return { path: [], kind: `a ${tag} (JSON would turn it into {})` };
    if (tag !== 'Object') return { path: [], kind: `a ${tag} (not JSON data)` };
  }
  if (typeof v.toJSON === 'function') return { path: [], kind: 'an object with a toJSON method (JSON would replace it by what toJSON returns)' };
  for (const k of Object.keys(v)) {
    const found = find(v[k], seen, false);
    if (found !== null) {
      found.path.unshift(k);
      return found;
    }
  }
  return null;
}
