// A worker of the app's own: ctxguard's server plus a method of the app, by URL (no bundler).
import { serveGuard } from '/pkg/worker-serve.js';

serveGuard({
  methods: {
    // The tool outputs of a conversation, with their token counts, computed next to the guard.
    toolOutputs(arg, { api, messages }) {
      return messages
        .filter((m) => m.role === 'tool')
        .slice(0, arg.limit)
        .map((m) => ({ id: m.tool_call_id, tokens: api.countTokens(m.content, { model: 'gpt-4o' }) }));
    },
  },
});
