// chainPreModelHooks: compose several pre-model hooks, each seeing the previous one's model
// input (so a user's guidance and an attempt's guidance stack instead of overriding each
// other). Pure JS: model inputs are plain objects, nothing here needs the wasm module.

function ctxguardError(code, message) {
  const e = new Error(message);
  e.name = 'CtxguardError';
  e.code = code;
  return e;
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
      const next = await hook(current);
      // A hook that returns nothing keeps the input it was given.
      if (next !== undefined && next !== null) {
        if (typeof next !== 'object' || !Array.isArray(next.messages)) {
          throw ctxguardError('INVALID_OPTIONS', 'a pre-model hook must return a model input ({ messages, ... }) or nothing');
        }
        current = next;
      }
    }
    return current;
  };
}
