// Rewrites one marked block of BENCHMARKS.md, for the scripts whose tables live beside the
// generated section (builds.mjs, gemini-tokenizer.mjs):
//   <!-- BEGIN section "NAME" — COMMAND rewrites it -->
//   …
//   <!-- END section "NAME" -->
// The block must exist already (its place in the document is chosen by hand).
import fs from 'node:fs';

export function writeSection(file, name, body) {
  const doc = fs.readFileSync(file, 'utf8');
  const begin = new RegExp(`<!-- BEGIN section "${name}"[^>]*-->\\n`);
  const end = `<!-- END section "${name}" -->`;
  const a = doc.match(begin);
  const b = doc.indexOf(end);
  if (!a || b < a.index) throw new Error(`${file} has no block <!-- BEGIN section "${name}" … --> … ${end}`);
  const from = a.index + a[0].length;
  fs.writeFileSync(file, `${doc.slice(0, from)}\n${body.trim()}\n\n${doc.slice(b)}`);
}
