// chainPreModelHooks: compose several pre-model hooks, each seeing the previous one's model
// input (so a user's guidance and an attempt's guidance stack instead of overriding each
// other). Pure JS: model inputs are plain objects, nothing here needs the wasm module.

import { ctxguardError } from './errors.js';

const badReturn = () => ctxguardError('INVALID_OPTIONS', 'a pre-model hook must return a model input ({ messages, ... }) or nothing');

/**
 * What a hook returned, awaited, in a box (so the value is never awaited again: a value whose
 * `then` cannot even be read — a throwing proxy — is a bad return, not a crash).
 */
async function settle(result) {
  let then;
  try {
    then = result !== null && (typeof result === 'object' || typeof result === 'function') ? result.then : undefined;
  } catch {
    throw badReturn();
  }
  return { value: typeof then === 'function' ? await result : result };
}

/**
 * @param {Array<(input: object) => object | undefined | Promise<object | undefined>>} hooks
 * @returns {(input: object) => Promise<object>}
 */
export function chainPreModelHooks(hooks) {
  if (!Array.isArray(hooks)) throw ctxguardError('INVALID_OPTIONS', 'chainPreModelHooks expects an array of functions');
  hooks.forEach((h, i) => {
    if (typeof h !== 'function') throw ctxguardError('INVALID_OPTIONS', `hooks[${i}] is not a function`);
  });
  const chain = hooks.slice();
  return async function chained(input) {
    let current = input;
    for (const hook of chain) {
      // A hook's own exception or rejection rejects the chained call unchanged.
      const { value: next } = await settle(hook(current));
      // A hook that returns nothing keeps the input it was given.
      if (next !== undefined && next !== null) {
        let ok = false;
        try {
          ok = typeof next === 'object' && Array.isArray(next.messages);
        } catch {
          // A throwing getter or proxy: not a readable model input.
        }
        if (!ok) throw badReturn();
        current = next;
      }
    }
    return current;
  };
}
