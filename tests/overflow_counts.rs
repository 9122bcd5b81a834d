//! The figures an overflow error states (`promptTokens`, `completionTokens`, `requestedTokens`,
//! `limit`, `countQualifier`), on a table of real messages with where each was seen: every wording
//! ctxguard reads a figure from, the overflow wordings that state none, localized ones, and errors
//! of other kinds whose numbers must never be read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use ctxguard::overflow::{classify_value, ErrorKind, OverflowCounts, Qualifier};
use serde_json::{json, Value};

use Qualifier::{About, AtLeast, Exact};

struct Case {
    source: &'static str,
    input: Value,
    want: OverflowCounts,
}

/// `(prompt, completion, requested, limit, qualifier)`; `0` stands for "not stated".
fn n(p: u32, c: u32, t: u32, l: u32, q: Option<Qualifier>) -> OverflowCounts {
    let some = |v: u32| (v != 0).then_some(v);
    OverflowCounts { prompt_tokens: some(p), completion_tokens: some(c), requested_tokens: some(t), limit: some(l), qualifier: q }
}

fn none() -> OverflowCounts {
    OverflowCounts::default()
}

fn case(source: &'static str, input: Value, want: OverflowCounts) -> Case {
    Case { source, input, want }
}

fn msg(m: &str) -> Value {
    json!({ "status": 400, "message": m })
}

fn with_figures() -> Vec<Case> {
    vec![
        // ------------------------------------------------------------ Anthropic
        case("Anthropic via the AI SDK, github.com/stackblitz-labs/bolt.diy/issues/401",
            json!({"message": "APICallError [AI_APICallError]: prompt is too long: 202609 tokens > 200000 maximum"}),
            n(202_609, 0, 0, 200_000, Some(Exact))),
        case("Anthropic TypeScript SDK, body JSON in the message, github.com/anthropics/claude-code/issues/12186",
            json!({"status": 400, "message": r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CVQe1dLrGNMJyE1ghG1av"}"#}),
            n(208_310, 0, 0, 200_000, Some(Exact))),
        case("Anthropic input + max_tokens over the window, github.com/docker/docker-agent/issues/569",
            json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"}}}),
            n(178_959, 64_000, 0, 200_000, Some(Exact))),
        case("Anthropic, the same without backticks, github.com/stackblitz/bolt.new/issues/7414",
            msg("input length and max_tokens exceed context limit: 90402 + 116650 > 204648, decrease input length or max_tokens and try again"),
            n(90_402, 116_650, 0, 204_648, Some(Exact))),
        case("Bedrock Converse relaying Claude, github.com/daisuke-awaji/moca/issues/254",
            json!({"code": "ValidationException", "message": "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"}),
            n(200_049, 0, 0, 200_000, Some(Exact))),
        // ------------------------------------------------------------ Google
        case("Gemini API, github.com/google-gemini/gemini-cli/issues/6678",
            json!({"status": 400, "body": [{"error": {"code": 400, "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
                "errors": [{"message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", "domain": "global", "reason": "badRequest"}],
                "status": "INVALID_ARGUMENT"}}]}),
            n(1_200_293, 0, 0, 1_048_576, Some(Exact))),
        case("Gemini through @google/genai, JSON inside JSON, github.com/google-gemini/gemini-cli/issues/5807",
            json!({"message": "{\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 400,\\n    \\\"message\\\": \\\"The input token count (1091639) exceeds the maximum number of tokens allowed (1048576).\\\",\\n    \\\"status\\\": \\\"INVALID_ARGUMENT\\\"\\n  }\\n}\\n\",\"code\":400,\"status\":\"Bad Request\"}}"}),
            n(1_091_639, 0, 0, 1_048_576, Some(Exact))),
        case("Vertex AI, github.com/google-gemini/gemini-cli/issues/19727",
            json!({"message": "Failed to generate content: Unable to submit request because the input token count is 1251952 but model only supports up to 1048576. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters."}),
            n(1_251_952, 0, 0, 1_048_576, Some(Exact))),
        case("Gemini without the count, github.com/arkavo-org/arkavo-edge/issues/371",
            json!({"status": 400, "body": {"error": {"code": 400, "message": "The input token count exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}}),
            n(0, 0, 0, 1_048_576, None)),
        case("Vertex AI without the count or parentheses, github.com/warpdotdev/warp/issues/15662",
            json!({"message": "Vertex AI API error: Error 400, Message: The input token count exceeds the maximum number of tokens allowed 1048576., Status: INVALID_ARGUMENT, Details: []"}),
            n(0, 0, 0, 1_048_576, None)),
        case("A Vertex limit far below the model's window (the host's window is wrong for this route), github.com/googleapis/python-genai/issues/2050",
            json!({"error": {"code": 400, "message": "The input token count (25270) exceeds the maximum number of tokens allowed (4000).", "status": "INVALID_ARGUMENT"}}),
            n(25_270, 0, 0, 4_000, Some(Exact))),
        // ------------------------------------------------------------ OpenAI and its wording
        case("OpenAI, messages only, github.com/chathub-dev/chathub/issues/126",
            json!({"body": r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#}),
            n(4_294, 0, 0, 4_097, Some(Exact))),
        case("OpenAI with function definitions (the total is the input), github.com/dissorial/Chainlit-OpenAI-Functions/issues/1",
            msg("This model's maximum context length is 4097 tokens. However, your messages resulted in 4238 tokens (4143 in the messages, 95 in the functions). Please reduce the length of the messages or functions."),
            n(4_238, 0, 0, 4_097, Some(Exact))),
        case("OpenAI with the completion (split), github.com/mckaywrigley/chatbot-ui/issues/102",
            json!({"status": 400, "body": {"error": {"message": "This model's maximum context length is 4097 tokens. However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}}),
            n(3_120, 1_000, 4_120, 4_097, Some(Exact))),
        case("OpenAI legacy completions (semicolon), github.com/stanford-crfm/helm/issues/94 (code sample)",
            msg("This model's maximum context length is 2049 tokens, however you requested 2054 tokens (2049 in your prompt; 5 for the completion). Please reduce your prompt; or completion length."),
            n(2_049, 5, 2_054, 2_049, Some(Exact))),
        case("OpenAI legacy completions (comma), github.com/stanford-crfm/helm/issues/94 (description)",
            msg("OpenAI error: This model's maximum context length is 2049 tokens, however you requested 2054 tokens (2049 in your prompt, 5 for the completion). Please reduce your prompt or completion length."),
            n(2_049, 5, 2_054, 2_049, Some(Exact))),
        case("OpenAI total only, no split: the input is not stated, github.com/langchain-ai/langchain/issues/11001",
            msg("This model's maximum context length is 4097 tokens, however you requested 4226 tokens"),
            n(0, 0, 4_226, 4_097, Some(Exact))),
        case("DeepSeek, github.com/evalstate/fast-agent/issues/621",
            json!({"status": 400, "body": {"error": {"message": "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}}),
            n(122_942, 8_192, 131_134, 131_072, Some(Exact))),
        case("Azure/OpenAI-compatible in a Chinese client, github.com/Chanzhaoyu/chatgpt-web/issues/354",
            json!({"message": "ChatGPT error 400: {\n  \"error\": {\n    \"message\": \"This model's maximum context length is 4096 tokens. However, you requested 4130 tokens (3130 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.\",\n    \"type\": \"invalid_request_error\",\n    \"param\": \"messages\",\n    \"code\": \"context_length_exceeded\"\n  }\n}"}),
            n(3_130, 1_000, 4_130, 4_096, Some(Exact))),
        // ------------------------------------------------------------ vLLM and OpenAI-compatible servers
        case("vLLM, messages + completion, github.com/vllm-project/vllm/issues/20409",
            json!({"status": 400, "body": {"object": "error", "message": "This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion. None", "type": "BadRequestError", "param": null, "code": 400}}),
            n(9_591, 10_000, 19_591, 16_384, Some(Exact))),
        case("vLLM, newer wording: a lower bound on the input, github.com/AIDotNet/OpenCowork/issues/82",
            msg("This model's maximum context length is 262144 tokens. However, you requested 128000 output tokens and your prompt contains at least 134145 input tokens, for a total of at least 262145 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=134145)"),
            n(134_145, 128_000, 262_145, 262_144, Some(AtLeast))),
        case("vLLM (Ascend), the lower bound is the window itself, github.com/vllm-project/vllm-ascend/issues/11557",
            json!({"body": {"error": {"message": "This model's maximum context length is 4096 tokens. However, you requested 1 output tokens and your prompt contains at least 4096 input tokens, for a total of at least 4097 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=4096)", "type": "BadRequestError", "param": "input_tokens", "code": 400}}}),
            n(4_096, 1, 4_097, 4_096, Some(AtLeast))),
        case("vLLM, input only, github.com/soundprediction/predicato/issues/51",
            msg("ValueError: This model's maximum context length is 40960 tokens. However, your request has 91714 input tokens. Please reduce the length of the input messages."),
            n(91_714, 0, 0, 40_960, Some(Exact))),
        case("vLLM decoder prompt, github.com/thu-coai/Glyph/issues/9",
            json!({"status": 400, "body": {"error": {"message": "The decoder prompt (length 163840) is longer than the maximum model length of 131072. Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.", "type": "BadRequestError", "param": null, "code": 400}}}),
            n(163_840, 0, 0, 131_072, Some(Exact))),
        case("vLLM behind Xinference, Python repr, github.com/langchain-ai/deepagents/issues/468",
            json!({"status": 500, "message": "Error code: 500 - {'detail': '[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens.'}"}),
            n(66_501, 0, 0, 65_536, Some(Exact))),
        case("vLLM, total length, github.com/vllm-project/vllm/issues/12165",
            msg("ValueError: The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens."),
            n(25_938, 0, 0, 4_096, Some(Exact))),
        case("OpenRouter relaying DeepInfra, provider JSON inside the message, github.com/ai-christianson/RA.Aid/issues/41",
            json!({"body": {"error": {"message": "ConnectionError: {\n        \"object\": \"error\",\n        \"message\": \"This model's maximum context length is 16000 tokens. However, you requested 17165 tokens (13069 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.\",\n        \"type\": \"BadRequestError\",\n        \"param\": null,\n        \"code\": 400\n    }", "code": 502}}}),
            n(13_069, 4_096, 17_165, 16_000, Some(Exact))),
        case("OpenRouter, about (text input, output), github.com/OpenHands/OpenHands/issues/9937",
            msg("This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."),
            n(7_884, 131_072, 138_956, 131_072, Some(About))),
        case("OpenRouter, about, with tool input (added to the input), github.com/boldsoftware/shelley/issues/159",
            msg("This endpoint's maximum context length is 204800 tokens. However, you requested about 205432 tokens (81684 of text input, 3748 of tool input, 120000 in the output). Please reduce the length of either one [...]"),
            n(85_432, 120_000, 205_432, 204_800, Some(About))),
        case("OpenRouter, about, text input only, github.com/topoteretes/cognee/issues/1061",
            json!({"body": r#"{"error":{"message":"This endpoint's maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#}),
            n(94_307, 0, 94_307, 16_384, Some(About))),
        case("Moonshot (Kimi): a total, not the input, github.com/MoonshotAI/kimi-cli/issues/2011",
            json!({"status": 400, "body": {"error": {"message": "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)", "type": "invalid_request_error"}}}),
            n(0, 0, 269_030, 262_144, Some(Exact))),
        case("Moonshot, older wording, github.com/MoonshotAI/MoonshotAI-Cookbook/issues/18",
            json!({"status": 400, "body": {"error": {"message": "model max length exceeded, max length:8192", "type": "invalid_request_error"}}}),
            n(0, 0, 0, 8_192, None)),
        case("Zhipu GLM 1210, Chinese + English, github.com/foreveryh/claude-code-switch/issues/12",
            json!({"status": 400, "body": {"type": "error", "error": {"message": "API 调用参数有误，请检查文档。Request 182387 input tokens exceeds the model's maximum context length 202750", "code": "1210"}}}),
            n(182_387, 0, 0, 202_750, Some(Exact))),
        case("GLM served by vLLM behind a proxy, github.com/fuergaosi233/claude-code-proxy/issues/60",
            json!({"status": 400, "body": {"detail": "Error code: 400 - {'object': 'error', 'message': \"The input (233781 tokens) is longer than the model's context length (202752 tokens).\", 'type': 'BadRequestError', 'param': None, 'code': 400}"}}),
            n(233_781, 0, 0, 202_752, Some(Exact))),
        case("SiliconFlow-style code 20015, github.com/leookun/cursor-byok/issues/129",
            json!({"status": 400, "body": {"code": 20015, "message": "number of input tokens (204703) has exceeded max_prompt_tokens (202752) limit.", "data": null}}),
            n(204_703, 0, 0, 202_752, Some(Exact))),
        case("prompt_tokens vs max_seq_len, github.com/sjzar/chatlog/issues/30",
            msg("400 length of prompt_tokens (163280) must be less than max_seq_len (32768)."),
            n(163_280, 0, 0, 32_768, Some(Exact))),
        case("Bedrock Mantle wording, as matched by BerriAI/litellm litellm/litellm_core_utils/exception_mapping_utils.py",
            json!({"status": 400, "body": {"error": {"type": "invalid_request_error", "message": "prompt tokens (250000) exceed model maximum (200000)"}}}),
            n(250_000, 0, 0, 200_000, Some(Exact))),
        case("Hugging Face TGI, github.com/huggingface/chat-ui/issues/1149",
            json!({"status": 422, "message": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`"}),
            n(6_204, 2_047, 0, 8_192, Some(Exact))),
        case("llama-cpp-python server, github.com/rllm-team/rllm/issues/55",
            msg("Requested tokens (516) exceed context window of 512"),
            n(516, 0, 0, 512, Some(Exact))),
        case("ds4 server, message and fields, github.com/antirez/ds4/pull/150",
            json!({"status": 400, "body": {"error": {"message": "Prompt tokens (9000) exceeds context size (8192)", "type": "context_exceeded", "n_prompt_tokens": 9000, "n_ctx": 8192}}}),
            n(9_000, 0, 0, 8_192, Some(Exact))),
        case("llama.cpp server: no figure in the text, read from n_prompt_tokens / n_ctx, github.com/oobabooga/textgen/issues/7257",
            json!({"status": 400, "body": {"error": {"code": 400, "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}}}),
            n(14_429, 0, 0, 8_192, Some(Exact))),
        case("LM Studio: the window only (the kept tokens are not the input), github.com/dyad-sh/dyad/issues/925",
            json!({"body": {"error": "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 2048 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}}),
            n(0, 0, 0, 2_048, None)),
        case("LM Studio mid-generation, github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1251",
            json!({"message": "Reached context length of 4096 tokens with model (arch: qwen3vlmoe) that does not currently support mid-generation context overflow. Try reloading with a larger context length or shortening the prompt/chat."}),
            n(0, 0, 0, 4_096, None)),
        case("Qwen on DashScope: the input limit, github.com/agentscope-ai/QwenPaw/issues/6255",
            json!({"status": 400, "body": {"error": {"code": "invalid_parameter_error", "message": "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]", "type": "invalid_request_error"}}}),
            n(0, 0, 0, 983_616, None)),
        case("xAI (Grok), github.com/cline/cline/issues/3120",
            msg("400 \"This model's maximum prompt length is 131072 but the request contains 136973 tokens.\""),
            n(136_973, 0, 0, 131_072, Some(Exact))),
        case("GitHub Copilot, github.com/microsoft/vscode-copilot-release/issues/6700",
            msg(r#"Request Failed: 400 {"error":{"message":"prompt token count of 65446 exceeds the limit of 64000","param":"","code":"","type":""}}"#),
            n(65_446, 0, 0, 64_000, Some(Exact))),
        case("GitHub Copilot with its code, github.com/microsoft/copilot-intellij-feedback/issues/94",
            json!({"status": 400, "body": {"error": {"message": "prompt token count of 138898 exceeds the limit of 64000", "code": "model_max_prompt_tokens_exceeded"}}}),
            n(138_898, 0, 0, 64_000, Some(Exact))),
        case("Mistral, wording from github.com/badlogic/pi-mono packages/ai/src/utils/overflow.ts (figures from a test table derived from it)",
            msg("Prompt contains 300000 tokens, too large for model with 131072 maximum context length"),
            n(300_000, 0, 0, 131_072, Some(Exact))),
        case("ds4, newer wording with grouped digits, from the same test table (code search)",
            msg("Prompt has 300,000 tokens, but the configured context size is 131,072 tokens"),
            n(300_000, 0, 0, 131_072, Some(Exact))),
        case("Poolside, from the same test table (code search)",
            msg("Input length 265330 exceeds the maximum allowed input length of 262144 tokens."),
            n(265_330, 0, 0, 262_144, Some(Exact))),
        case("LiteLLM's own wording, from the same test table (code search)",
            msg("Requested token count exceeds the model's maximum context length of 131072 tokens"),
            n(0, 0, 0, 131_072, None)),
        // ------------------------------------------------------------ localized
        case("A Chinese gateway's translation of Gemini's message, err.dmxapi.cn/detail.php?id=473",
            msg("输入令牌数(3377151)超过了允许的最大令牌数(1048576)。"),
            n(3_377_151, 0, 0, 1_048_576, Some(Exact))),
    ]
}

/// Overflows whose message states no figure: classified, nothing reported.
fn without_figures() -> Vec<Case> {
    vec![
        case("OpenAI Responses, github.com/dyad-sh/dyad/issues/1672",
            json!({"body": {"error": {"type": "error", "error": {"type": "invalid_request_error", "code": "context_length_exceeded", "message": "Your input exceeds the context window of this model. Please adjust your input and try again.", "param": "input"}}}}),
            none()),
        case("Bedrock InvokeModel, github.com/aws-samples/assessment-generator/issues/2",
            json!({"body": {"errorType": "ValidationException", "errorMessage": "Input is too long for requested model."}}),
            none()),
        case("Anthropic 413 naming the window, github.com/anthropics/claude-code/issues/6358",
            json!({"status": 413, "body": r#"{"type":"error","error":{"type":"invalid_request_error","message":"Request size exceeds model context window"}}"#}),
            none()),
        case("llama.cpp server, message only, github.com/continuedev/continue/issues/9797",
            msg("400 the request exceeds the available context size, try increasing it"),
            none()),
        case("Ollama states only the excess, wording from github.com/badlogic/pi-mono (Kilo-Org/kilocode packages/opencode/src/provider/error.ts)",
            msg("prompt too long; exceeded max context length by 4096 tokens"),
            none()),
        case("Ollama /api/embed, github.com/nano-step/nano-brain/issues/208",
            json!({"status": 400, "body": "{\"error\":\"the input length exceeds the context length\"}"}),
            none()),
        case("MiniMax, wording from github.com/badlogic/pi-mono packages/ai/src/utils/overflow.ts",
            msg("invalid params, context window exceeds limit"),
            none()),
        case("z.ai, wording from Kilo-Org/kilocode packages/opencode/src/provider/error.ts",
            msg("model_context_window_exceeded"),
            none()),
        case("A bare 413", json!({"status": 413}), none()),
        case("Chinese gateway, github.com/NIyueeE/ds-free-api/issues/36", json!({"status": 500, "message": "internal error: 输入内容超长，请缩短后重试"}), none()),
        case("Chinese client wording, github.com/ChatGPTBox-dev/chatGPTBox/issues/367", json!({"message": "超出最大上下文长度, 请清理对话并重试"}), none()),
        case("Spanish phrasing (tests/overflow.rs localized table)", msg("La solicitud supera la longitud máxima del contexto del modelo"), none()),
        case("Japanese phrasing (tests/overflow.rs localized table)", msg("入力トークン数が上限を超えました"), none()),
        case("German phrasing (tests/overflow.rs localized table)", msg("Die Eingabe überschreitet die maximale Kontextlänge"), none()),
    ]
}

#[test]
fn every_wording_gives_its_figures() {
    let cases: Vec<Case> = with_figures().into_iter().chain(without_figures()).collect();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let got = classify_value(&c.input);
        if got.kind != ErrorKind::ContextOverflow {
            failures.push(format!("{}\n    not an overflow: {:?} {}", c.source, got.kind, got.reason));
        } else if got.counts != c.want {
            failures.push(format!("{}\n    want {:?}\n    got  {:?}", c.source, c.want, got.counts));
        }
    }
    assert!(failures.is_empty(), "{} of {} wrong:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn new_wordings_are_overflows_with_their_own_reason() {
    let reason = |m: &str| classify_value(&msg(m)).reason;
    assert_eq!(reason("This model's maximum prompt length is 131072 but the request contains 136973 tokens."), "marker:maximum_prompt_length");
    assert_eq!(reason("prompt token count of 65446 exceeds the limit of 64000"), "marker:prompt_token_count");
    assert_eq!(reason("Unable to submit request because the input token count is 1251952 but model only supports up to 1048576."), "marker:input_token_count");
    assert_eq!(reason("Prompt has 300,000 tokens, but the configured context size is 131,072 tokens"), "marker:configured_context_size");
    assert_eq!(reason("Input length 265330 exceeds the maximum allowed input length of 262144 tokens."), "marker:maximum_input_length");
    assert_eq!(reason("输入令牌数(3377151)超过了允许的最大令牌数(1048576)。"), "marker:zh_context");
    assert_eq!(classify_value(&json!({"code": "model_max_prompt_tokens_exceeded"})).reason, "marker:context_exceeded");
}

/// Numbers in errors of other kinds are never read, nor numbers a pattern cannot hold.
#[test]
fn no_figures_outside_overflows_or_beyond_u32() {
    let others = [
        json!({"status": 429, "message": "Rate limit reached for gpt-4o in organization org-XXXX on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754."}),
        json!({"status": 413, "body": {"error": {"message": "Request too large for model `llama-3.1-70b-versatile` in organization `org_01` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message size and try again.", "type": "tokens", "code": "rate_limit_exceeded"}}}),
        json!({"body": {"error": {"code": "rate_limit_error", "message": "This request would exceed the rate limit for your organization of 20,000 input tokens per minute."}}}),
        json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}}}),
        json!({"status": 400, "message": "400 max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model"}),
        json!({"status": 413, "message": "image exceeds 5 MB maximum: 7471104 bytes > 5242880 bytes"}),
        json!({"status": 400, "body": {"n_prompt_tokens": 9000, "n_ctx": 8192}}),
    ];
    for v in others {
        let c = classify_value(&v);
        assert_ne!(c.kind, ErrorKind::ContextOverflow, "{v}");
        assert_eq!(c.counts, none(), "{v}");
    }
    // A figure too large for a u32 is not read (nor anything after it in that pattern).
    let c = classify_value(&msg("prompt is too long: 99999999999 tokens > 200000 maximum"));
    assert_eq!((c.kind, c.counts), (ErrorKind::ContextOverflow, none()));
    // Fields that are not whole numbers are not read.
    let c = classify_value(&json!({"body": {"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 14429.5, "n_ctx": "8192"}}}));
    assert_eq!(c.counts, none());
}

#[test]
fn the_json_shape() {
    let v = serde_json::to_value(classify_value(&msg("prompt is too long: 202609 tokens > 200000 maximum"))).unwrap();
    assert_eq!(
        v,
        json!({"kind": "context_overflow", "compactAndRetry": true, "reason": "marker:prompt_too_long",
            "promptTokens": 202609, "completionTokens": null, "requestedTokens": null, "limit": 200000, "countQualifier": "exact"})
    );
    let v = serde_json::to_value(classify_value(&json!({"status": 400}))).unwrap();
    assert_eq!(
        v,
        json!({"kind": "other", "compactAndRetry": false, "reason": "none",
            "promptTokens": null, "completionTokens": null, "requestedTokens": null, "limit": null, "countQualifier": null})
    );
}
