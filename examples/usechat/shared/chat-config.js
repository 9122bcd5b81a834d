// What the browser and the server agree on: the model, its window (small, so that a 50-turn
// chat is compacted), the system prompt and the tools the server runs. The browser counts the
// prompt and the tool definitions with the messages, so `metrics` is what the model receives.
export const MODEL = 'gpt-4o';
export const CONTEXT_WINDOW = 10_500;
// The reserve is the room a request leaves after what the page prepared: the reply (1,000) and
// what the server adds within the same request — here one `search` step, its call and its
// ~2,400-token result (streamText runs the tool and calls the model again: server/server.mjs).
// 7,000 usable tokens stay for what the page prepares.
export const RESERVED_OUTPUT_TOKENS = 3_500;
export const SYSTEM_PROMPT = 'You are a helpful assistant for a code base. Answer briefly.';

// JSON schemas, so that ctxguard can count them (a ToolSet: `format: 'ai-sdk-ui'` takes the
// AI SDK's `tools` shape) and the server can wrap them with `jsonSchema()`.
export const TOOL_SCHEMAS = {
  search: {
    description: 'Search the code base for a text; returns the matching lines.',
    inputSchema: {
      type: 'object',
      properties: { q: { type: 'string', description: 'The text to look for' } },
      required: ['q'],
      additionalProperties: false,
    },
  },
};
