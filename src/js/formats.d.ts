// Types of the messages, `system` and tools of each wire format, re-exported by index.d.ts (the
// package's types). Hand-written, checked by `tsc --noEmit` (tests/ts/, tests/ts/sdk/).

/**
 * Wire formats the adapters read and write: OpenAI Chat Completions (`openai`), OpenAI Responses
 * API input items (`openai-responses`), Anthropic Messages (`anthropic`), Gemini `contents` as
 * `@google/genai` sends them (`gemini`), Vercel AI SDK model messages (`ai-sdk`) and UI messages
 * (`ai-sdk-ui`: what `useChat` holds). What each format's messages, `system` and tools are:
 * `FormatTypes`.
 */
export type Format = 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'ai-sdk' | 'ai-sdk-ui';

/** A JSON value, as messages and tool schemas are. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------------
// Messages, `system` and tools of each format.
//
// Every function that takes messages is generic over the caller's own message type `M` and
// gives `M` back: an SDK's array (`ChatCompletionMessageParam[]`, `ResponseInputItem[]`,
// `MessageParam[]`, `Content[]`, `ModelMessage[]`; readonly or not) goes in as it is, and what
// comes out goes to the same SDK without a cast. The types below require only what tells one
// format's messages from another's; every other field is carried through untouched. At run time
// messages are read as JSON data (README, "API"): a `Date`, typed array or cycle is an error.

/**
 * A message as plain JSON, in any format, for hosts whose messages are not typed (parsed JSON,
 * a store's records). An array typed `WireMessage[]` goes in unchecked and comes back as it is;
 * written out, a message is checked against its format's type (`MessageOf`). Unknown fields are
 * carried through at run time.
 */
export type WireMessage = { [key: string]: JsonValue | undefined };
/** ctxguard's markers on a checkpoint's messages (summaries, retained messages); never on model-visible ones. */
export type Markers = { [marker: string]: JsonValue };
/** A tool definition as plain JSON, in any format. */
export type WireTool = { [key: string]: JsonValue | undefined };
/** A JSON object (a schema, call arguments) as the SDKs type one. */
export type JsonObject = { [key: string]: unknown };
/**
 * `T`, or `T` with more fields: an SDK's part (an interface) fits `T`, a part written out with
 * fields ctxguard does not name fits the second (parts are checked by their `type` only).
 */
export type Open<T> = T | (T & { [key: string]: unknown });
/** A note ctxguard writes as a system message: a summary, an evidence note, guidance. */
export type SystemNote = { role: 'system'; content: string };

// OpenAI Chat Completions (`format: 'openai'`).

/** A Chat Completions content part (`ChatCompletionContentPart`, and `refusal` in assistant messages). */
export type OpenAiChatPart = Open<{ type: 'text' | 'image_url' | 'input_audio' | 'file' | 'refusal' }>;
/** A Chat Completions tool call (`ChatCompletionMessageToolCall`): a function call or a custom tool's. */
export type OpenAiChatToolCall = Open<{ id: string; type: 'function' | 'custom' }>;
/** A system or developer message (`ChatCompletionSystemMessageParam`, `…DeveloperMessageParam`). */
export interface OpenAiChatSystemMessage {
  role: 'system' | 'developer';
  content: string | readonly OpenAiChatPart[];
  name?: string | undefined;
  ctxguard?: Markers | undefined;
}
/** A user message (`ChatCompletionUserMessageParam`). */
export interface OpenAiChatUserMessage {
  role: 'user';
  content: string | readonly OpenAiChatPart[];
  name?: string | undefined;
  ctxguard?: Markers | undefined;
}
/** An assistant message (`ChatCompletionAssistantMessageParam`; a response's `choices[0].message` too). */
export interface OpenAiChatAssistantMessage {
  role: 'assistant';
  content?: string | readonly OpenAiChatPart[] | null | undefined;
  tool_calls?: readonly OpenAiChatToolCall[] | undefined;
  function_call?: { name: string; arguments: string } | null | undefined;
  name?: string | undefined;
  refusal?: string | null | undefined;
  audio?: { id: string } | null | undefined;
  annotations?: readonly unknown[] | undefined;
  ctxguard?: Markers | undefined;
}
/** A tool result (`ChatCompletionToolMessageParam`): it answers the call `tool_call_id`. */
export interface OpenAiChatToolMessage {
  role: 'tool';
  content: string | readonly OpenAiChatPart[];
  tool_call_id: string;
  ctxguard?: Markers | undefined;
}
/** A legacy function result (`ChatCompletionFunctionMessageParam`). */
export interface OpenAiChatFunctionMessage {
  role: 'function';
  content: string | null;
  name: string;
  ctxguard?: Markers | undefined;
}
/** A Chat Completions message (`ChatCompletionMessageParam` of `openai`), by role. */
export type OpenAiChatMessage =
  | OpenAiChatSystemMessage
  | OpenAiChatUserMessage
  | OpenAiChatAssistantMessage
  | OpenAiChatToolMessage
  | OpenAiChatFunctionMessage;
/** A text part, as in a system message (`ChatCompletionContentPartText`). */
export interface OpenAiTextPart {
  type: 'text';
  text: string;
}
/** A Chat Completions tool (`ChatCompletionTool`): a function, or a custom tool (kept; it has no schema to count). */
export type OpenAiChatTool =
  | {
      type: 'function';
      function: { name: string; description?: string | undefined; parameters?: JsonObject | undefined; strict?: boolean | null | undefined };
    }
  | { type: 'custom'; custom: { name: string; description?: string | undefined } };

// OpenAI Responses API (`format: 'openai-responses'`).

/** A Responses message part: `input_text`, `input_image`, `input_file`; `output_text`, `refusal` in assistant output. */
export type ResponsesContentPart = Open<{ type: 'input_text' | 'input_image' | 'input_file' | 'output_text' | 'refusal' }>;
/**
 * A Responses input item (`ResponseInputItem` of `openai`): a message (with or without
 * `type: 'message'`; `system` and `developer` messages stay in the list), an `item_reference`, or
 * another item by its `type`: `function_call` / `function_call_output` (paired by `call_id`),
 * custom and built-in tool calls, `reasoning` (kept and dropped with the item that follows it),
 * compaction items (kept or dropped whole, never edited).
 */
export type ResponsesInputItem = ResponsesMessage | { type?: 'item_reference' | null | undefined; id: string } | Open<{ type: string }>;
/** A Responses message item (`EasyInputMessage`, `ResponseInputItem.Message`, `ResponseOutputMessage`). */
export interface ResponsesMessage {
  type?: 'message' | undefined;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | readonly ResponsesContentPart[];
  id?: string | undefined;
  status?: string | undefined;
  phase?: string | null | undefined;
  ctxguard?: Markers | undefined;
}
/** A Responses tool (`Tool` of `openai`): a function (flat: `name` and `parameters` at the top), or a built-in tool, kept as it is. */
export type ResponsesTool =
  | {
      type: 'function';
      name: string;
      description?: string | null | undefined;
      parameters: JsonObject | null;
      strict?: boolean | null | undefined;
    }
  | { type: string };

// Anthropic Messages (`format: 'anthropic'`).

/** An Anthropic content block (`ContentBlockParam`): `text`, `image`, `document`, `tool_use`, `tool_result`, `thinking`...; kinds ctxguard does not read are kept whole. */
export type AnthropicBlock = Open<{ type: string }>;
/**
 * An Anthropic message (`MessageParam` of `@anthropic-ai/sdk`). The SDK's type includes
 * mid-conversation `system` messages; ctxguard does not read them yet (`INVALID_ROLE`): pass
 * system text as the `system` option.
 */
export interface AnthropicMessage {
  role: 'user' | 'assistant' | 'system';
  content: string | readonly AnthropicBlock[];
  ctxguard?: Markers | undefined;
}
/** A text block of the request's `system` as ctxguard takes it (`TextBlockParam`). */
export interface AnthropicSystemBlock {
  type: 'text';
  text: string;
  cache_control?: { type: 'ephemeral'; ttl?: string | undefined } | null | undefined;
  citations?: readonly unknown[] | null | undefined;
}
/** A text block of the `system` ctxguard gives back; the input's `cache_control` is kept (not typed here). */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}
/**
 * An Anthropic tool (`ToolUnion`): a custom tool with `input_schema`, or a server tool by `type`
 * (kept; it has no schema to count). The SDK's toolsets (`browser_toolset_...`,
 * `computer_toolset_...`) have no `name`; ctxguard does not read them yet (`INVALID_TOOL`).
 */
export type AnthropicTool =
  | { name: string; description?: string | undefined; input_schema: JsonObject }
  | { type: string; name?: string | undefined };

// Gemini (`format: 'gemini'`).

/** A part of a Gemini `Content` (`Part` of `@google/genai`). Fields not listed (`executableCode`, `videoMetadata`...) are kept. */
export interface GeminiPart {
  text?: string;
  /** A thought summary. */
  thought?: boolean;
  /** Stays with the part it signs: a signed `functionCall` is never separated from its signature. */
  thoughtSignature?: string;
  /** Base64 data: `image/*` counts as an image, `audio/*` as audio, text files are read as text. */
  inlineData?: { mimeType?: string; data?: string };
  fileData?: { mimeType?: string; fileUri?: string };
  functionCall?: { id?: string; name?: string; args?: JsonObject };
  functionResponse?: { id?: string; name?: string; response?: JsonObject };
}
/** A Gemini `Content` (`@google/genai`): `role` `'user'` or `'model'` (the SDK types it `string`) and `parts`. */
export interface GeminiContent {
  role?: string;
  parts?: readonly GeminiPart[];
  /** Not a Gemini field: a message with `content` is another format's. */
  content?: never;
  ctxguard?: Markers | undefined;
}
/** A `systemInstruction` Content as ctxguard gives it back with its notes: the input's parts, then one `{ text }` part per note. */
export interface GeminiSystemInstruction {
  role?: string;
  parts: GeminiPart[];
}
/** A function declaration of a Gemini tool (`FunctionDeclaration`). */
export interface GeminiFunctionDeclaration {
  name?: string;
  description?: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
}
/** A Gemini tool (`Tool` of `@google/genai`): `functionDeclarations`; built-in tools (`googleSearch`, `codeExecution`...) are kept as they are. */
export interface GeminiTool {
  functionDeclarations?: readonly GeminiFunctionDeclaration[];
}

// Vercel AI SDK model messages (`ModelMessage` of the `ai` package, 5 and later; `format: 'ai-sdk'`).
// Parts of kinds ctxguard does not interpret are carried through.

/** `providerOptions` on messages and parts: carried through, never counted. */
export type AiSdkProviderOptions = { [provider: string]: { [key: string]: unknown } };
/**
 * Bytes of an image or file: a base64 string or a URL (string or `URL`, which comes back as its
 * `href`); AI SDK 7 tagged file data (`{ type: 'data' | 'url' | 'reference' | 'text', ... }`) and
 * provider references (`{ openai: 'file-...' }`) too. Raw bytes (`Uint8Array`, `Buffer`,
 * `ArrayBuffer`) are part of the AI SDK's type but do not survive JSON: ctxguard rejects them with
 * `INVALID_CONTENT_PART` — pass base64 instead.
 */
export type AiSdkDataContent =
  | string
  | URL
  | Uint8Array
  | ArrayBuffer
  | { type: 'data' | 'url' | 'reference' | 'text' }
  | { [provider: string]: string };
export interface AiSdkTextPart {
  type: 'text';
  text: string;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkImagePart {
  type: 'image';
  image: AiSdkDataContent;
  mediaType?: string | undefined;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkFilePart {
  type: 'file';
  /** A text file's (`text/*`, JSON, XML...) base64 or base64 `data:` URL is read as its text, and previewed. */
  data: AiSdkDataContent;
  mediaType: string;
  filename?: string | undefined;
  providerOptions?: AiSdkProviderOptions | undefined;
}
/** Counted only after the latest user message (providers drop earlier turns' reasoning). */
export interface AiSdkReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: AiSdkProviderOptions | undefined;
}
export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerOptions?: AiSdkProviderOptions | undefined;
  providerExecuted?: boolean | undefined;
}
export type AiSdkToolResultOutput =
  | { type: 'text' | 'error-text'; value: string; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'json' | 'error-json'; value: unknown; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'execution-denied'; reason?: string | undefined; providerOptions?: AiSdkProviderOptions | undefined }
  | { type: 'content'; value: Array<{ type: string }>; providerOptions?: AiSdkProviderOptions | undefined };
export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  /** A `json` output stays a `json` output when ctxguard compacts it (the compact form is JSON). */
  output: AiSdkToolResultOutput;
  providerOptions?: AiSdkProviderOptions | undefined;
}
/** A part of another kind (`tool-approval-request`, `reasoning-file`...): carried through verbatim. */
export type AiSdkOtherPart = Open<{ type: string }>;
/** ctxguard's markers; only on checkpoint messages, never on model-visible ones. */
export type AiSdkMarkers = Markers;
export interface AiSdkSystemMessage {
  role: 'system';
  content: string;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkUserMessage {
  role: 'user';
  content: string | Array<AiSdkTextPart | AiSdkImagePart | AiSdkFilePart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkAssistantMessage {
  role: 'assistant';
  content:
    | string
    | Array<AiSdkTextPart | AiSdkFilePart | AiSdkReasoningPart | AiSdkToolCallPart | AiSdkToolResultPart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
export interface AiSdkToolMessage {
  role: 'tool';
  /** Tool results (and AI SDK 6 `tool-approval-response` parts, carried through). */
  content: Array<AiSdkToolResultPart | AiSdkOtherPart>;
  providerOptions?: AiSdkProviderOptions | undefined;
  ctxguard?: AiSdkMarkers | undefined;
}
/** One message as `generateText` / `streamText` take it in `messages`. */
export type AiSdkModelMessage = AiSdkSystemMessage | AiSdkUserMessage | AiSdkAssistantMessage | AiSdkToolMessage;
/** An AI SDK tool as ctxguard reads it for counting: `inputSchema` a JSON schema or a `jsonSchema()` / `zodSchema()` Schema (not a bare Zod schema). */
export interface AiSdkTool {
  /** AI SDK 7 also allows a function here; it is not JSON, so such a description is not counted. */
  description?: string | ((...args: never[]) => unknown) | undefined;
  inputSchema?: unknown;
  type?: string | undefined;
}
/** AI SDK `tools`: tools by name. */
export type AiSdkToolSet = { [name: string]: AiSdkTool };

// Vercel AI SDK UI messages (`UIMessage` of the `ai` package, 5 and later: what `useChat`
// holds and sends; `format: 'ai-sdk-ui'`).

/** A UI message part: `text`, `reasoning`, `file`, `tool-<name>`, `dynamic-tool`, `source-url`, `data-<name>`, `step-start`... */
export interface AiSdkUiPart {
  type: string;
}
/** A UI message (`UIMessage`): the app's id, its role and its parts; other fields are carried through. */
export interface AiSdkUiMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: readonly AiSdkUiPart[];
  metadata?: unknown;
}

/** The `read_attachment` tool's parameters (a JSON schema). */
export type ReadAttachmentSchema = {
  type: 'object';
  properties: { [name: string]: JsonValue };
  required: string[];
  additionalProperties: boolean;
};

/**
 * Each format's types, in one place (inputs take the SDK's types, and plain JSON too: `WireMessage`,
 * `WireTool`, text parts as `JsonValue[]`):
 * - `message`: what a message may be;
 * - `system`: the `system` option; `systemOut`: what `result.system` holds when not `null`
 *   (`never`: always `null`);
 * - `tools`: the `tools` option;
 * - `note`: what ctxguard itself adds to `messages` — summaries, evidence notes, guidance
 *   (`never`: they go to `system`);
 * - `readTool`: what `readAttachmentTool({ format })` returns.
 */
export interface FormatTypes {
  openai: {
    message: OpenAiChatMessage;
    /** A system prompt, counted as a system message before `messages` and not repeated in `result.messages`. */
    system: string | readonly OpenAiTextPart[] | readonly JsonValue[];
    /** System messages stay in `messages`: `result.system` is always `null`. */
    systemOut: never;
    tools: readonly (OpenAiChatTool | WireTool)[];
    note: SystemNote;
    readTool: { type: 'function'; function: { name: 'read_attachment'; description: string; parameters: ReadAttachmentSchema } };
  };
  'openai-responses': {
    message: ResponsesInputItem;
    /** The request's `instructions` (system and developer items in the input stay in `messages`). */
    system: string | null;
    /** The `instructions` to send (`openai.responses.create({ input: result.messages, instructions: result.system })`). */
    systemOut: string;
    tools: readonly (ResponsesTool | WireTool)[];
    /** `{ role: 'system', content }` items. */
    note: SystemNote;
    readTool: { type: 'function'; name: 'read_attachment'; description: string; parameters: ReadAttachmentSchema; strict: boolean };
  };
  anthropic: {
    message: AnthropicMessage;
    /** The request's `system`: a string or text blocks. */
    system: string | readonly AnthropicSystemBlock[] | readonly JsonValue[];
    /** The request's `system`, ctxguard's summary and notes included. */
    systemOut: string | AnthropicTextBlock[];
    tools: readonly (AnthropicTool | WireTool)[];
    note: never;
    readTool: { name: 'read_attachment'; description: string; input_schema: ReadAttachmentSchema };
  };
  gemini: {
    message: GeminiContent;
    /** `systemInstruction`: a Content, a Part, parts, or text (`ContentUnion` of `@google/genai`). */
    system: string | GeminiContent | GeminiPart | readonly GeminiPart[];
    /** `systemInstruction`: alone, in the shape it came in; with ctxguard's notes, one Content. */
    systemOut: string | GeminiPart | GeminiPart[] | GeminiSystemInstruction;
    tools: readonly (GeminiTool | WireTool)[];
    note: never;
    readTool: { functionDeclarations: { name: 'read_attachment'; description: string; parametersJsonSchema: ReadAttachmentSchema }[] };
  };
  'ai-sdk': {
    message: AiSdkModelMessage;
    /** `system` / `instructions` of `generateText`: a string, a system message, or several. */
    system: string | AiSdkSystemMessage | readonly AiSdkSystemMessage[];
    /** The system messages (see `SystemOf`), never in `result.messages`. */
    systemOut: SystemNote[];
    tools: AiSdkToolSet;
    note: never;
    /** A ToolSet entry: wrap it as `tool({ description, inputSchema: jsonSchema(inputSchema), execute })`. */
    readTool: { read_attachment: { description: string; inputSchema: ReadAttachmentSchema } };
  };
  'ai-sdk-ui': {
    message: AiSdkUiMessage;
    /** The server's prompt, for counting: a string, a system model message, a UI system message, or several. */
    system: string | AiSdkSystemMessage | AiSdkUiMessage | readonly (AiSdkSystemMessage | AiSdkUiMessage)[];
    /** System model messages for `streamText`'s `instructions`: the `system` option's, then ctxguard's notes. */
    systemOut: SystemNote[];
    tools: AiSdkToolSet;
    /** ctxguard's notes go to `system`; `result.messages` holds only the app's UI messages. */
    note: never;
    readTool: { read_attachment: { description: string; inputSchema: ReadAttachmentSchema } };
  };
}

/** A message of format `F` (of any format when `F` is all of `Format`). */
export type MessageOf<F extends Format> = FormatTypes[F]['message'];
/** Any message ctxguard reads: one of a format's, or untyped JSON (`WireMessage`). */
export type AnyMessage = MessageOf<Format> | WireMessage;
/**
 * The `messages` a guard of format `F` takes: the caller's own type `M`, which must be a message
 * of `F` — its role with the fields that role needs (`tool_call_id` on an OpenAI tool result) —
 * and, when it has a `role`, have no field that no format's message has (a misspelled `contnt`
 * is an error, not a message counted as empty). A type with an index signature (`WireMessage`,
 * `Record<string, …>`: untyped JSON) is taken as it is. (An intersection rather than a narrower
 * bound on `M`, so that a guard of a known format is still a `ContextGuard`; of two arrays, so
 * that `M` is inferred as the whole element type, a message written out next to SDK-typed ones
 * included.)
 */
export type Messages<F extends Format, M> = readonly M[] & readonly Checked<F, M>[];
/** What a field no message has must be: nothing a caller writes (the compiler's error names the field). */
export type NotAField<K> = `${K & string} is not a field of a message (misspelled?)`;
/** The fields a message of some format has (`MessageOf<Format>`, member by member). */
export type MessageField = AllKeys<MessageOf<Format>>;
/** The keys of each member of `U` that names its keys (an `Open` member's index signature is not one). */
type AllKeys<U> = U extends unknown ? (string extends keyof U ? never : keyof U) : never;
/**
 * What `Messages` checks each message type `M` of the caller's against: untyped JSON passes;
 * anything else is a message of `F` (the compiler names a missing or mistyped field), and one
 * with a `role` can have no field outside `MessageField` (its type becomes `NotAField`, so the
 * compiler's error names it). `F` appears only in the branches, so that `Checked<'openai', M>` is assignable to
 * `Checked<Format, M>`.
 */
export type Checked<F extends Format, M> = M extends unknown
  ? string extends keyof M
    ? unknown
    : MessageOf<F> & (M extends { role: unknown } ? { [K in Exclude<keyof M, MessageField>]?: NotAField<K> } : unknown)
  : never;
/** The `tools` option of format `F`. */
export type ToolsOf<F extends Format> = FormatTypes[F]['tools'];
/** The `system` option of format `F`. */
export type SystemIn<F extends Format> = FormatTypes[F]['system'];
/** The `system` option in any format. */
export type SystemOption = SystemIn<Format>;
/**
 * What `system` holds in a result, when not `null`, for format `F` and messages `M`. AI SDK:
 * the system messages among `M` and ctxguard's notes, for `generateText`'s `system` /
 * `instructions`.
 */
export type SystemOf<F extends Format, M> = F extends 'ai-sdk' ? (Extract<M, { role: 'system' }> | SystemNote)[] : FormatTypes[F]['systemOut'];
/**
 * The messages of a result, for format `F` and messages `M`: the caller's own `M` and the notes
 * ctxguard writes into the list. AI SDK: without the system messages, which are in `system`.
 */
export type ResultMessage<F extends Format, M> = F extends 'ai-sdk' ? Exclude<M, { role: 'system' }> : M | FormatTypes[F]['note'];
/** `readAttachmentTool({ format })`'s result. */
export type ReadAttachmentTool<F extends Format> = FormatTypes[F]['readTool'];
