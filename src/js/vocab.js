// loadVocabulary: makes the counts of a model family exact by loading its vocabulary
// (docs/vocabularies.md). The data ships in the package (vocab/<name>.bin, not in the .wasm);
// how the file is read depends on the entry: Node reads it from disk next to the module,
// browsers and workers fetch it (see vocab-node.js, vocab-web.js). Bytes the host fetched itself
// (ctxguard's format, a Hugging Face tokenizer.json or a Mistral tekken.json) load the same way.
// Pure JS around the wasm exports; this module does not call into wasm when it is evaluated.
import * as wasm from './ctxguard_wasm.js';
import { ctxguardError } from './errors.js';

let reader = null;

/** Sets how a vocabulary file of the package is read (the entries do this once). */
export function useVocabularyReader(read) {
  reader = read;
}

/** The bytes of `value` as a Uint8Array, or null when it is not bytes. */
function bytesOf(value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

/**
 * `await loadVocabulary(nameOrBytes)`: a vocabulary name (`'llama3'`, `'qwen3'`, `'deepseek-v3'`,
 * `'mistral-tekken'`, `'mistral-spm-v3'`, `'mistral-spm-v7'`: surface.js VOCABULARIES), an alias
 * (`'qwen2.5'`, `'deepseek-r1'`, `'tekken'`...) or a model id (`'llama3.1:8b'`), or the bytes of a vocabulary. Resolves to what was loaded; loading one
 * that is already loaded does nothing.
 */
export async function loadVocabulary(what) {
  const bytes = bytesOf(what);
  if (bytes) return wasm.loadVocabularyBytes(bytes, 'bytes given to loadVocabulary');
  if (typeof what !== 'string') {
    throw ctxguardError('INVALID_OPTIONS', 'loadVocabulary expects a vocabulary name, a model id, or the bytes of a vocabulary (Uint8Array or ArrayBuffer)');
  }
  const file = wasm.vocabularyFile(what);
  const loaded = wasm.loadedVocabulary(file);
  if (loaded) return loaded;
  if (!reader) throw ctxguardError('INTERNAL', 'this entry of ctxguard has no vocabulary reader');
  let data;
  try {
    data = await reader(file);
  } catch (e) {
    throw ctxguardError('VOCABULARY_UNAVAILABLE', `cannot read the ${file} vocabulary file of the package (vocab/${file}.bin): ${e?.message ?? e}`);
  }
  return wasm.loadVocabularyBytes(bytesOf(data) ?? new Uint8Array(0), `ctxguard vocab/${file}.bin`);
}
