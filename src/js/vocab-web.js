// Browsers and workers: the package's vocabulary files are fetched from next to this module.
// One literal URL per file (a new URL of a plain string and import.meta.url), so that bundlers
// (Vite, webpack, rolldown) see each file and emit it as an asset; nothing is fetched until it
// is loaded.
import { useVocabularyReader } from './vocab.js';

const FILES = {
  llama3: () => new URL('./vocab/llama3.bin', import.meta.url),
  qwen3: () => new URL('./vocab/qwen3.bin', import.meta.url),
  'deepseek-v3': () => new URL('./vocab/deepseek-v3.bin', import.meta.url),
  'mistral-tekken': () => new URL('./vocab/mistral-tekken.bin', import.meta.url),
  'mistral-spm-v3': () => new URL('./vocab/mistral-spm-v3.bin', import.meta.url),
  'mistral-spm-v7': () => new URL('./vocab/mistral-spm-v7.bin', import.meta.url),
};

useVocabularyReader(async (file) => {
  const url = FILES[file]?.();
  if (!url) throw new Error(`no file for ${file}`);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
});
