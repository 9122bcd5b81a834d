// Node: the package's vocabulary files are read from disk, next to this module (vocab/).
import { readFile } from 'node:fs/promises';
import { useVocabularyReader } from './vocab.js';

useVocabularyReader((file) => readFile(new URL(`./vocab/${file}.bin`, import.meta.url)));
