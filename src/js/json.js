// What ctxguard accepts as message data: JSON values. The binding reads messages with
// JSON.stringify, which silently changes some JS values (a Date becomes its ISO string, a Map or
// Set becomes {}, a typed array an object of its bytes, NaN and ±Infinity become null, undefined
// or a function inside an array becomes null). `findNonJson` finds the first such value before
// the text is read, so it is an error instead of a silent change.
//
// Accepted: plain objects (from any realm) and class instances without `toJSON`, URL objects (read
// as their href), arrays, strings,
// finite numbers, booleans, null; `undefined`, functions and symbols as object *fields* are
// dropped (as JSON.stringify drops them). Cycles, throwing getters and proxies are left to
// JSON.stringify, which reports them.

const objectProto = Object.prototype;
const tagOf = (v) => objectProto.toString.call(v).slice(8, -1);

/**
 * The first value JSON would silently change, as `{ path, kind }` (path: keys and indexes from
 * the top, kind: what was found and what JSON would make of it), or `null` when there is none.
 */
export function findNonJson(value) {
  const seen = new Set();
  try {
    return walk(value, seen, true);
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

function walk(v, seen, inArray) {
  if (v === null || typeof v !== 'object') {
    const p = problem(v, inArray);
    return p === null ? null : { path: [], kind: p };
  }
  if (seen.has(v)) return null;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = walk(v[i], seen, true);
      if (found !== null) {
        found.path.unshift(i);
        return found;
      }
    }
    return null;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== objectProto && proto !== null) {
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
    const found = walk(v[k], seen, false);
    if (found !== null) {
      found.path.unshift(k);
      return found;
    }
  }
  return null;
}
