// The stored path of `guard.measure`, `guard.prepare` and `guard.guardSources`: each guard sends
// wasm only the message objects that are new or were changed in place since it last sent them
// (sent-messages.js), names the others by id, and rebuilds what wasm names instead of writing it
// (`sameAs`, `keptAs`). The protocol, what the guard's store keeps and why the results never share
// an object with the input: docs/stored-calls.md. Anything that is not plain JSON data takes the
// plain path, which reports or reads it exactly as before.

import { inheritedToJSON } from './json.js';
import { SentMessages } from './sent-messages.js';

const hasOwn = Object.prototype.hasOwnProperty;
/** Longer arrays (and array-like proxies claiming a huge length) take the plain path. */
const MAX_MESSAGES = 1_000_000;

// The packed transfer of the fresh messages (src/binding/packed.rs): instead of one JSON text of them
// (JSON.stringify escaping every string, then a parse of every string in wasm), a small JSON
// skeleton in which each long string value (and each starting with U+0000) is the placeholder
// "\u0000", followed by those strings UTF-8-encoded one after the other; `lens[0]` is the
// skeleton's length in bytes, `lens[1..]` the strings'. Only messages found to be plain
// JSON data are packed; anything else JSON.stringify would not read back as itself (a non-finite
// number, `undefined` in an array) gives `null`: the call then sends the messages as they are,
// and wasm reads (or rejects) them as before.

/** Strings at least this long go out of line (short ones are cheaper inline). */
const LONG = 24;
const encoder = typeof TextEncoder === 'function' ? new TextEncoder() : null;

/** `{ bytes, lens }` for the fresh messages (all plain JSON data: json.js `snapshot`), or null. */
function pack(fresh) {
  if (encoder === null || typeof encoder.encodeInto !== 'function') return null;
  // A `toJSON` inherited by every object would make JSON.stringify read something else.
  if (inheritedToJSON()) return null;
  const strings = [];
  let chars = 0;
  let ok = true;
  const skeleton = JSON.stringify(fresh, function (key, v) {
    switch (typeof v) {
      case 'string':
        if (v.length < LONG && v.charCodeAt(0) !== 0) return v;
        strings.push(v);
        chars += v.length;
        return '\u0000';
      case 'number':
        if (!Number.isFinite(v)) ok = false;
        return v;
      case 'undefined':
        // In an array JSON would write null (an error of the plain path); a field is dropped.
        if (Array.isArray(this)) ok = false;
        return v;
      default:
        return v;
    }
  });
  if (!ok || typeof skeleton !== 'string') return null;
  // UTF-8 takes at most 3 bytes per UTF-16 unit; pages never written are never touched.
  const bytes = new Uint8Array(3 * (skeleton.length + chars));
  const lens = new Uint32Array(strings.length + 1);
  let w = encoder.encodeInto(skeleton, bytes).written;
  lens[0] = w;
  for (let i = 0; i < strings.length; i++) {
    const n = encoder.encodeInto(strings[i], bytes.subarray(w)).written;
    lens[i + 1] = n;
    w += n;
  }
  return { bytes: bytes.subarray(0, w), lens };
}

const states = new WeakMap();

function stateOf(guard) {
  let s = states.get(guard);
  if (!s) {
    // `generation`: how many times everything sent was forgotten (`forget`).
    s = { call: 0, nextId: 1, sent: new SentMessages(), generation: 0, outputs: new Map(), pending: 0 };
    states.set(guard, s);
  }
  return s;
}

/**
 * What JSON makes of plain JSON data, as new objects: `undefined` fields dropped, -0 as 0.
 * for-in over own keys: a third faster than Object.keys on 2,000 messages (no key list).
 */
function copy(v) {
  if (typeof v !== 'object' || v === null) return v === 0 ? 0 : v;
  if (Array.isArray(v)) {
    const n = v.length;
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = copy(v[i]);
    return out;
  }
  const out = {};
  for (const k in v) {
    if (!hasOwn.call(v, k)) continue;
    const x = v[k];
    if (x !== undefined) out[k] = copy(x);
  }
  return out;
}

/**
 * Put copies of the caller's messages where wasm named them (`sameAs`), and of the compacted
 * outputs kept from earlier results (`keptAs`); keep a pristine copy of each output wasm named;
 * drop `sameAs` and `keptAs`. `s.pending` already counts this call out.
 */
function rebuild(result, messages, s) {
  const { sameAs, keptAs, keptRuns } = result;
  delete result.sameAs;
  delete result.keptAs;
  delete result.keptRuns;
  if (!sameAs) return result;
  const used = new Map();
  let run = 0;
  for (let i = 0; i < sameAs.length; i++) {
    if (sameAs[i] >= 0) {
      result.messages[i] = copy(messages[sameAs[i]]);
      continue;
    }
    // A name: one tag (a number), or -2 for the next of `keptRuns` (a string); -1: none.
    const code = keptAs ? keptAs[i] : -1;
    if (code === -1) continue;
    const name = code === -2 ? keptRuns[run++] : code;
    if (result.messages[i] === null) {
      const kept = s.outputs.get(name);
      // Never happens: wasm names only what this call said it holds, and nothing is dropped
      // while a call is pending.
      if (kept === undefined) throw new Error(`ctxguard: internal error: compacted output ${name} is not kept`);
      result.messages[i] = copy(kept);
      used.set(name, kept);
    } else {
      used.set(name, copy(result.messages[i]));
    }
  }
  if (s.pending === 0) s.outputs = used;
  else for (const [name, kept] of used) s.outputs.set(name, kept);
  return result;
}

/** The plan of a stored call, or null for the plain path. `whole`: every message must be plain JSON data. */
function plan(guard, messages, whole) {
  try {
    const s = stateOf(guard);
    if (s.disabled || !Array.isArray(messages) || messages.length > MAX_MESSAGES) return null;
    const p = planCall(s, messages);
    return whole && !p.plain ? null : p;
  } catch {
    // A proxy or getter that throws: the plain path reports it with a stable code.
    return null;
  }
}

/**
 * The store refused a call: it no longer holds an id the call named (the store decides what it
 * keeps: docs/stored-calls.md), a message's entry is lent to a `prepare` that has not read it
 * yet, or it cannot hold these messages (AI SDK format). Nothing sent is named again, and calls
 * planned before do not teach what they sent.
 */
function forget(s) {
  s.sent.forgetAll();
  s.generation++;
}

/** What a call sent, learned once it is read; the latest call's record of a message wins. */
function learn(p) {
  const { s } = p;
  if (p.generation !== s.generation) return;
  for (const [m, rec] of p.learned) {
    const known = s.sent.get(m);
    if (known === undefined || known.call < rec.call) s.sent.remember(m, rec);
  }
}

function stored(guard, method, p, options, withOutput) {
  const { ids, call } = p;
  const messages = (p.plain && p.fresh.length > 0 && pack(p.fresh)) || p.fresh;
  const fresh = { messages, ids: Uint32Array.from(p.freshIds), at: Uint32Array.from(p.freshAt) };
  if (!withOutput) return guard[method](ids, fresh, call, options);
  const tags = [];
  const runs = [];
  for (const name of p.s.outputs.keys()) (typeof name === 'number' ? tags : runs).push(name);
  return guard[method](ids, fresh, call, { tags: Float64Array.from(tags), runs }, options);
}

/**
 * A stored call, sent again in full when the store refused it for an id it no longer holds:
 * `{ result, plan }`, or `result` undefined when the store refused every message in full too
 * (then for good: the guard takes the plain path from now on).
 */
function storedCall(guard, method, p, options, withOutput, messages) {
  const result = stored(guard, method, p, options, withOutput);
  if (result !== undefined) return { result, plan: p };
  forget(p.s);
  if (p.fresh.length < messages.length) {
    const again = plan(guard, messages, withOutput);
    if (again !== null) return storedCall(guard, method, again, options, withOutput, messages);
  } else {
    p.s.disabled = true;
  }
  return { result: undefined, plan: p };
}

/**
 * Route `measure`, `guardSources` and `prepare` of `Guard.prototype` through the id-keyed store;
 * the plain methods stay the fallback.
 */
export function installMessageMemo(Guard) {
  const proto = Guard.prototype;
  route(proto, 'measure', 'measureStored', false, (result, p) => {
    learn(p);
    return result;
  });
  route(proto, 'guardSources', 'guardSourcesStored', true, (result, p, messages) => {
    p.s.pending--;
    learn(p);
    return rebuild(result, messages, p.s);
  });
  // Learned once the call is read (a rejected call may not have stored its messages); a call in
  // between sends them in full again, which is only slower.
  route(proto, 'prepare', 'prepareStored', true, (promise, p, messages) =>
    promise.then(
      (result) => {
        p.s.pending--;
        learn(p);
        return rebuild(result, messages, p.s);
      },
      (error) => {
        p.s.pending--;
        throw error;
      },
    ));
}

/**
 * Replace `proto[name]` by a method that takes the stored path `proto[storedName]` when it can
 * (`withOutput`: the call returns messages, which come back as indexes where unchanged) and the
 * plain method otherwise; `finish(result, plan, messages)` completes a stored call.
 */
function route(proto, name, storedName, withOutput, finish) {
  const plainMethod = proto[name];
  if (typeof plainMethod !== 'function' || typeof proto[storedName] !== 'function') return;
  proto[name] = {
    [name](messages, options) {
      const first = plan(this, messages, withOutput);
      if (first === null) return plainMethod.call(this, messages, options);
      const { s } = first;
      // Counted while the call may still refer to kept outputs (`rebuild`); `finish` counts a
      // call that returns out again.
      if (withOutput) s.pending++;
      let call;
      try {
        call = storedCall(this, storedName, first, options, withOutput, messages);
      } catch (e) {
        if (withOutput) s.pending--;
        throw e;
      }
      if (call.result === undefined) {
        if (withOutput) s.pending--;
        return plainMethod.call(this, messages, options);
      }
      return finish(call.result, call.plan, messages);
    },
  }[name];
}

/** Which messages the guard already holds (their ids) and which go over in full. */
function planCall(s, messages) {
  // Ids are 32-bit: past the last one, start again (the store holds nothing under the new ids
  // that a call does not send in full first).
  if (s.nextId + messages.length >= 0xffffffff) {
    s.nextId = 1;
    forget(s);
  }
  const call = ++s.call;
  const n = messages.length;
  const ids = new Uint32Array(n);
  const fresh = [];
  const freshIds = [];
  const freshAt = [];
  const learned = [];
  let plain = true;
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    const isObject = m !== null && typeof m === 'object';
    const rec = isObject ? s.sent.unchanged(m) : undefined;
    if (rec !== undefined) {
      ids[i] = rec.id;
      continue;
    }
    const id = s.nextId++;
    ids[i] = id;
    fresh.push(m);
    freshIds.push(id);
    freshAt.push(i);
    const sent = isObject ? SentMessages.record(m, id) : null;
    if (sent === null) {
      plain = false;
      continue;
    }
    sent.call = call;
    learned.push([m, sent]);
  }
  return { s, call, generation: s.generation, ids, fresh, freshIds, freshAt, learned, plain };
}
