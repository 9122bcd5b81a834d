// The counting-only builds' declarations (pkg/count.d.ts): the counting exports with the same
// types as 'ctxguard', and nothing else.
import { countTokens, knownModels, memoryStats, modelInfo, version, type CountTokensOptions, type ModelInfo } from 'ctxguard/o200k/count';
import * as cl100k from 'ctxguard/cl100k/count';

const options: CountTokensOptions = { encoding: 'o200k_base' };
const n: number = countTokens('hello world', options);
const m: number = cl100k.countTokens('hello world', { model: 'gpt-4' });
const info: ModelInfo = modelInfo('gpt-4o');
const all: ModelInfo[] = knownModels();
const bytes: number = memoryStats().wasmBytes;
const v: string = version();
console.log(n, m, info.encoding, all.length, bytes, v);

// @ts-expect-error the counting-only builds have no ContextGuard
new cl100k.ContextGuard({ model: 'gpt-4' });
// @ts-expect-error an unknown option
countTokens('x', { encodnig: 'o200k_base' });
// @ts-expect-error not an encoding
countTokens('x', { encoding: 'p50k_base' });
