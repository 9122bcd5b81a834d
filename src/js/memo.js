// The fast path of `guard.measure` (issue #7): a chat client measures the same conversation,
// grown by a message, before every turn and on every keystroke. Passing all of it into wasm as
// JSON costs time in proportion to its text (~100 ms for 2,000 messages / 5 MB), so each guard
// remembers which message objects it already holds (by identity, in a WeakMap) together with a
// snapshot of their JSON leaves, and sends only the messages that are new or were changed in place
// (a streaming reply appended to `content`, an edit). The wasm side keeps the parsed messages and
// their counts by id (src/store.rs); an entry unused for two calls is dropped there, and is never
// referred to again from here. A message holding anything JSON would transform (a Date, a Map,
// a toJSON method, a class instance) is never remembered: it takes the plain path every time.
// Strings are compared with ===, so an unchanged message costs a few property reads, not a scan
// of its text.

const OBJECT = Symbol('object');
const ARRAY = Symbol('array');
const MAX_DEPTH = 64;
/** Longer arrays (and array-like proxies claiming a huge length) take the plain path. */
const MAX_MESSAGES = 1_000_000;

/** Append the JSON leaves of `v` to `out`; false when `v` is not plain JSON data. */
function leaves(v, out, depth) {
  if (v === null || typeof v !== 'object') {
    const t = typeof v;
    if (t === 'function' || t === 'symbol' || t === 'bigint') return false;
    out.push(v);
    return true;
  }
  if (depth > MAX_DEPTH) return false;
  const proto = Object.getPrototypeOf(v);
  if (Array.isArray(v)) {
    if (proto !== Array.prototype) return false;
    out.push(ARRAY, v.length);
    for (let i = 0; i < v.length; i++) if (!leaves(v[i], out, depth + 1)) return false;
    return true;
  }
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(v);
  out.push(OBJECT, keys.length);
  for (const k of keys) {
    out.push(k);
    if (!leaves(v[k], out, depth + 1)) return false;
  }
  return true;
}

/** Does `v` still have the leaves `snap` recorded (from position `at`)? Returns the next position, or -1. */
function same(v, snap, at) {
  if (v === null || typeof v !== 'object') return Object.is(v, snap[at]) ? at + 1 : -1;
  const proto = Object.getPrototypeOf(v);
  if (Array.isArray(v)) {
    if (proto !== Array.prototype || snap[at] !== ARRAY || snap[at + 1] !== v.length) return -1;
    let p = at + 2;
    for (let i = 0; i < v.length && p >= 0; i++) p = same(v[i], snap, p);
    return p;
  }
  if (proto !== Object.prototype && proto !== null) return -1;
  const keys = Object.keys(v);
  if (snap[at] !== OBJECT || snap[at + 1] !== keys.length) return -1;
  let p = at + 2;
  for (let i = 0; i < keys.length && p >= 0; i++) {
    if (snap[p] !== keys[i]) return -1;
    p = same(v[keys[i]], snap, p + 1);
  }
  return p;
}

const states = new WeakMap();

function stateOf(guard) {
  let s = states.get(guard);
  if (!s) {
    s = { call: 0, nextId: 1, memo: new WeakMap() };
    states.set(guard, s);
  }
  return s;
}

/** Route `Guard.prototype.measure` through the id-keyed store; the plain method stays the fallback. */
export function installMessageMemo(Guard) {
  const plain = Guard.prototype.measure;
  if (typeof plain !== 'function' || typeof Guard.prototype.measureStored !== 'function') return;
  Guard.prototype.measure = function measure(messages, options) {
    let plan;
    try {
      const s = stateOf(this);
      plan = !s.disabled && Array.isArray(messages) && messages.length <= MAX_MESSAGES ? planCall(s, messages) : null;
    } catch {
      // A proxy or getter that throws: the plain path reports it with a stable code.
      plan = null;
    }
    if (plan === null) return plain.call(this, messages, options);
    const { s, call, ids, fresh, freshIds, freshAt, reused, learned } = plan;
    const result = this.measureStored(ids, fresh, Uint32Array.from(freshIds), Uint32Array.from(freshAt), call, options);
    if (result === undefined) {
      // The store cannot take this guard's format (AI SDK messages parse in context), or it and
      // this memo disagree (should not happen): forget everything, plain path — for good when
      // even a call with every message in full was refused.
      s.memo = new WeakMap();
      if (fresh.length === messages.length) s.disabled = true;
      return plain.call(this, messages, options);
    }
    for (const rec of reused) rec.lastUsed = call;
    for (const [m, rec] of learned) s.memo.set(m, rec);
    return result;
  };
}

/** Which messages the guard already holds (their ids) and which go over in full. */
function planCall(s, messages) {
  if (s.nextId + messages.length >= 0xffffffff) {
    s.nextId = 1;
    s.memo = new WeakMap();
    s.call += 2; // every id handed out so far is now out of date on both sides
  }
  const call = ++s.call;
  const n = messages.length;
  const ids = new Uint32Array(n);
  const fresh = [];
  const freshIds = [];
  const freshAt = [];
  const reused = [];
  const learned = [];
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    const isObject = m !== null && typeof m === 'object';
    const rec = isObject ? s.memo.get(m) : undefined;
    if (rec !== undefined && rec.lastUsed >= call - 2 && same(m, rec.snap, 0) === rec.snap.length) {
      ids[i] = rec.id;
      reused.push(rec);
      continue;
    }
    const id = s.nextId++;
    ids[i] = id;
    fresh.push(m);
    freshIds.push(id);
    freshAt.push(i);
    if (isObject) {
      const snap = [];
      if (leaves(m, snap, 0)) learned.push([m, { id, lastUsed: call, snap }]);
    }
  }
  return { s, call, ids, fresh, freshIds, freshAt, reused, learned };
}
