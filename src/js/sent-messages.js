// The send-only-what-changed cache, on the sending side: which message objects a receiver already
// holds, so that a call sends only the new or changed ones and names the others by id. Two
// senders use it, each for its own receiver (docs/stored-calls.md):
//   - memo.js, per guard: the receiver is the guard's store in wasm (src/guard/store.rs), which
//     decides itself what it keeps; a call naming an id it dropped is refused, and the sender
//     forgets everything (`forgetAll`) and sends the call again in full;
//   - worker.js, per connection: the receiver is the worker's store, which keeps what it is told;
//     `KeptByBudget` here decides what it keeps, and the sender tells it what to drop.
// Pure JS, no wasm: the main-thread worker module uses it.

import { matches, snapshot } from './json.js';

/** The message objects sent to one receiver, each with the record it went out as. */
export class SentMessages {
  #records = new WeakMap();

  /**
   * The record of plain data `m` sent as `id`: `{ id, snap, chars }` (its snapshot and string
   * characters, json.js), or null when `m` is not plain data (it then goes in full every time).
   * Not remembered until `remember`. Throws what a getter or Proxy trap of `m` throws.
   */
  static record(m, id) {
    const snap = [];
    const chars = snapshot(m, snap);
    return chars < 0 ? null : { id, snap, chars };
  }

  /**
   * `m`'s record when `m` still holds what it was sent with (its snapshot), else undefined.
   * Costs a few property reads per node, no scan of the text. Throws what a getter or Proxy trap
   * of `m` throws.
   */
  unchanged(m) {
    const rec = this.#records.get(m);
    return rec !== undefined && matches(m, rec.snap, 0) === rec.snap.length ? rec : undefined;
  }

  /** The record `m` was last sent as, changed since or not. */
  get(m) {
    return this.#records.get(m);
  }

  remember(m, rec) {
    this.#records.set(m, rec);
  }

  forget(m) {
    this.#records.delete(m);
  }

  forgetAll() {
    this.#records = new WeakMap();
  }
}

/**
 * What a receiver that keeps what it is told (the worker's store) holds, decided on the sending
 * side: the messages of the latest call, whatever their size, and older ones, the least recently
 * used dropped first, while all of them fit in `budget` string characters.
 */
export class KeptByBudget {
  #entries = new Map(); // id -> { chars, use }
  #use = 0;

  constructor(budget) {
    this.budget = budget;
    /** String characters of the messages kept. */
    this.chars = 0;
  }

  /** Messages kept. */
  get size() {
    return this.#entries.size;
  }

  /** A new call: the messages it adds or touches are its own until the next one. */
  begin() {
    this.#use++;
  }

  holds(id) {
    return this.#entries.has(id);
  }

  /** `id` is used by this call. */
  touch(id) {
    const e = this.#entries.get(id);
    if (e) e.use = this.#use;
  }

  add(id, chars) {
    this.#entries.set(id, { chars, use: this.#use });
    this.chars += chars;
  }

  /** Whether `id` was kept (it no longer is). */
  remove(id) {
    const e = this.#entries.get(id);
    if (!e) return false;
    this.#entries.delete(id);
    this.chars -= e.chars;
    return true;
  }

  /** Drops what no longer fits (this call's messages hold `callChars`), adding each id to `dropped`. */
  evict(callChars, dropped) {
    const budget = Math.max(this.budget, callChars);
    if (this.chars <= budget) return;
    const old = [...this.#entries].filter(([, e]) => e.use !== this.#use).sort((a, b) => a[1].use - b[1].use);
    for (const [id] of old) {
      if (this.chars <= budget) break;
      this.remove(id);
      dropped.push(id);
    }
  }
}
