// The conversation the app measures and compacts (also imported by the test, to compute the
// expected counts in Node).
export function conversation(turns) {
  const msgs = [{ role: 'system', content: 'You are a build assistant.' }];
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `Q${i}: why does module ${i} fail? ${'detail '.repeat(30)}` });
    msgs.push({ role: 'assistant', content: `Module ${i} fails. ${'because '.repeat(30)}` });
  }
  msgs.push({ role: 'user', content: 'Which one do I fix first?' });
  return msgs;
}

export const CONFIG = { model: 'gpt-4o', contextWindow: 6000, reservedOutputTokens: 1000 };
