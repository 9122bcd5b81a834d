//! Provider error classification on a table of real error payloads (each with where it was seen),
//! the negatives that must not trigger a compaction, the rule order, hostile input, and the
//! figures an overflow states (a second table: every wording, with and without numbers).

use ctxguard::provider::overflow::{
    classify, classify_value, Classification, ErrorKind, OverflowCounts, ProviderError, Qualifier, MAX_SCAN_BYTES,
};
use serde_json::{json, Value};

use ErrorKind::{ContextOverflow as Overflow, Other, PayloadTooLarge as Payload, RateLimit as Rate};

struct Case {
    /// Where the payload was seen (issue thread, or source file for strings only code documents).
    source: &'static str,
    /// What a host passes: `{ status?, message?, code?, body? }`.
    input: Value,
    kind: ErrorKind,
    reason: &'static str,
}

fn case(source: &'static str, input: Value, kind: ErrorKind, reason: &'static str) -> Case {
    Case { source, input, kind, reason }
}

/// Real payloads. Long ids (org ids, request ids) are kept as published or shortened; wording is
/// as published.
fn real_payloads() -> Vec<Case> {
    vec![
        // ---------------------------------------------------------------- context overflow
        case(
            "OpenAI chat, github.com/mckaywrigley/chatbot-ui/issues/102",
            json!({"status": 400, "body": {"error": {
                "message": "This model's maximum context length is 4097 tokens. However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}}),
            Overflow, "marker:context_length_exceeded",
        ),
        case(
            "OpenAI chat, raw body text, no status, github.com/chathub-dev/chathub/issues/126",
            json!({"body": r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#}),
            Overflow, "marker:context_length_exceeded",
        ),
        case(
            "OpenAI Responses stream error event, github.com/dyad-sh/dyad/issues/1672",
            json!({"body": {"error": {"type": "error", "sequence_number": 2, "error": {
                "type": "invalid_request_error", "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "param": "input"}}}}),
            Overflow, "marker:context_length_exceeded",
        ),
        case(
            "OpenAI Responses, message only, code as its own field (OpenAI SDK error shape), github.com/the-open-agent/openagent/issues/2344",
            json!({"message": "Your input exceeds the context window of this model. Please adjust your input and try again.", "code": "context_length_exceeded"}),
            Overflow, "marker:context_length_exceeded",
        ),
        case(
            "OpenAI legacy completions, github.com/stanford-crfm/helm/issues/94",
            json!({"message": "This model's maximum context length is 2049 tokens, however you requested 2054 tokens (2049 in your prompt; 5 for the completion). Please reduce your prompt; or completion length."}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "Anthropic via the TypeScript SDK (message = status + body text), github.com/anthropics/claude-code/issues/12186",
            json!({"status": 400, "message": r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CVQe1dLrGNMJyE1ghG1av"}"#}),
            Overflow, "marker:prompt_too_long",
        ),
        case(
            "Anthropic parsed body, github.com/anthropics/claude-code/issues/14195",
            json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 191989 tokens > 180000 maximum"}, "request_id": "req_011CWAgPbMohjStFaYrkLZCm"}}),
            Overflow, "marker:prompt_too_long",
        ),
        case(
            "Anthropic input + max_tokens over the window, github.com/docker/docker-agent/issues/569",
            json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"},
                "request_id": "req_011CUB2XUHWkFnQzxcKBbjpF"}}),
            Overflow, "marker:context_limit",
        ),
        case(
            "Anthropic 413 that names the context window, github.com/anthropics/claude-code/issues/6358",
            json!({"status": 413, "body": r#"{"type":"error","error":{"type":"invalid_request_error","message":"Request size exceeds model context window"},"request_id":"req_011CSPNDjJb37kb9tWgCojVg"}"#}),
            Overflow, "marker:context_window",
        ),
        case(
            "Gemini API, github.com/google-gemini/gemini-cli/issues/12214",
            json!({"status": 400, "body": [{"error": {"code": 400,
                "message": "The input token count (134123) exceeds the maximum number of tokens allowed (131072).",
                "errors": [{"message": "The input token count (134123) exceeds the maximum number of tokens allowed (131072).", "domain": "global", "reason": "badRequest"}],
                "status": "INVALID_ARGUMENT"}}]}),
            Overflow, "marker:exceeds_maximum_tokens",
        ),
        case(
            "Gemini through @google/genai: JSON inside a JSON message, no status, github.com/google-gemini/gemini-cli/issues/5807",
            json!({"message": "{\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 400,\\n    \\\"message\\\": \\\"The input token count (1091639) exceeds the maximum number of tokens allowed (1048576).\\\",\\n    \\\"status\\\": \\\"INVALID_ARGUMENT\\\"\\n  }\\n}\\n\",\"code\":400,\"status\":\"Bad Request\"}}"}),
            Overflow, "marker:exceeds_maximum_tokens",
        ),
        case(
            "Bedrock InvokeModel (AWS SDK v3 error object), github.com/aws-samples/assessment-generator/issues/2",
            json!({"body": {"errorType": "ValidationException", "errorMessage": "Input is too long for requested model.", "name": "ValidationException",
                "$fault": "client", "$metadata": {"httpStatusCode": 400, "requestId": "16fb0962-139d-4c70-ba9c-602d9630e854", "attempts": 1, "totalRetryDelay": 0},
                "stack": ["ValidationException: Input is too long for requested model.", "    at de_ValidationExceptionRes (/var/task/index.js:84:74209)"]}}),
            Overflow, "marker:input_too_long",
        ),
        case(
            "Bedrock Converse with Claude, github.com/daisuke-awaji/moca/issues/254",
            json!({"code": "ValidationException", "message": "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"}),
            Overflow, "marker:prompt_too_long",
        ),
        case(
            "llama.cpp server, exceed_context_size_error, github.com/oobabooga/textgen/issues/7257",
            json!({"status": 400, "body": {"error": {"code": 400, "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}}}),
            Overflow, "marker:context_exceeded",
        ),
        case(
            "llama.cpp server reporting overflow as a 500 (marker beats 5xx), github.com/ggml-org/llama.cpp/pull/15780",
            json!({"status": 500, "body": {"error": {"code": 500, "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                "type": "exceed_context_size_error", "n_prompt_tokens": 1407, "n_ctx": 256}}}),
            Overflow, "marker:context_exceeded",
        ),
        case(
            "llama.cpp server, message only, github.com/continuedev/continue/issues/9797",
            json!({"status": 400, "message": "400 the request exceeds the available context size, try increasing it"}),
            Overflow, "marker:context_size",
        ),
        case(
            "vLLM, github.com/thu-coai/Glyph/issues/9",
            json!({"status": 400, "body": {"error": {"message": "The decoder prompt (length 163840) is longer than the maximum model length of 131072. Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens. For image inputs, the number of image tokens depends on the number of images, and possibly their aspect ratios as well.",
                "type": "BadRequestError", "param": null, "code": 400}}}),
            Overflow, "marker:maximum_model_length",
        ),
        case(
            "vLLM behind Xinference, a 500 with a Python-repr message, github.com/langchain-ai/deepagents/issues/468",
            json!({"status": 500, "message": "Error code: 500 - {'detail': '[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens.'}"}),
            Overflow, "marker:maximum_model_length",
        ),
        case(
            "vLLM output + input over the window, github.com/AIDotNet/OpenCowork/issues/82",
            json!({"status": 400, "message": "This model's maximum context length is 262144 tokens. However, you requested 128000 output tokens and your prompt contains at least 134145 input tokens, for a total of at least 262145 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=134145)"}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "OpenRouter relaying DeepInfra: gateway code 502, provider JSON inside the message, github.com/ai-christianson/RA.Aid/issues/41",
            json!({"body": {"error": {"message": "ConnectionError: {\n        \"object\": \"error\",\n        \"message\": \"This model's maximum context length is 16000 tokens. However, you requested 17165 tokens (13069 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.\",\n        \"type\": \"BadRequestError\",\n        \"param\": null,\n        \"code\": 400\n    }",
                "code": 502, "metadata": {"provider_name": "DeepInfra", "raw": {"error_type": "validation_error"}}}}}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "OpenRouter, github.com/OpenHands/OpenHands/issues/9937",
            json!({"status": 400, "message": "This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "DeepSeek (code is the generic invalid_request_error), github.com/evalstate/fast-agent/issues/621",
            json!({"status": 400, "body": {"error": {"message": "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "Moonshot (Kimi), github.com/MoonshotAI/kimi-cli/issues/2011",
            json!({"status": 400, "body": {"error": {"message": "Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)", "type": "invalid_request_error"}}}),
            Overflow, "marker:token_limit",
        ),
        case(
            "Moonshot, older wording, github.com/MoonshotAI/MoonshotAI-Cookbook/issues/18",
            json!({"status": 400, "body": {"error": {"message": "model max length exceeded, max length:8192", "type": "invalid_request_error"}}}),
            Overflow, "marker:maximum_model_length",
        ),
        case(
            "Qwen on DashScope, OpenAI-compatible mode, github.com/agentscope-ai/QwenPaw/issues/6255",
            json!({"status": 400, "body": {"error": {"code": "invalid_parameter_error", "message": "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]",
                "param": null, "type": "invalid_request_error"}, "request_id": "81a373d6-28bd-9968-8335-e22a2127c41b"}}),
            Overflow, "marker:input_length_range",
        ),
        case(
            "Qwen on DashScope, native API, github.com/LLM-Red-Team/qwen-free-api/issues/23",
            json!({"body": {"code": "InvalidParameter", "message": "Range of input length should be [1, 6000]", "request_id": "xxxxxx-xxx-xxx-xxx-xxx"}}),
            Overflow, "marker:input_length_range",
        ),
        case(
            "Zhipu GLM code 1261, github.com/mangowhoiscloud/geode/pull/668",
            json!({"status": 400, "body": {"code": "1261", "message": "Prompt exceeds max length"}}),
            Overflow, "marker:prompt_too_long",
        ),
        case(
            "Zhipu GLM code 1210 on its Anthropic-compatible endpoint (Chinese + English), github.com/foreveryh/claude-code-switch/issues/12",
            json!({"status": 400, "body": {"type": "error", "error": {"message": "API 调用参数有误，请检查文档。Request 182387 input tokens exceeds the model's maximum context length 202750", "code": "1210"}}}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "GLM served by vLLM behind a proxy, github.com/fuergaosi233/claude-code-proxy/issues/60",
            json!({"status": 400, "body": {"detail": "Error code: 400 - {'object': 'error', 'message': \"The input (233781 tokens) is longer than the model's context length (202752 tokens).\", 'type': 'BadRequestError', 'param': None, 'code': 400}"}}),
            Overflow, "marker:context_length",
        ),
        case(
            "SiliconFlow-style gateway code 20015, github.com/leookun/cursor-byok/issues/129",
            json!({"status": 400, "body": {"code": 20015, "message": "number of input tokens (204703) has exceeded max_prompt_tokens (202752) limit.", "data": null}}),
            Overflow, "marker:input_tokens_exceed",
        ),
        case(
            "OpenAI-compatible server, prompt_tokens vs max_seq_len, github.com/sjzar/chatlog/issues/30",
            json!({"status": 400, "message": "400 length of prompt_tokens (163280) must be less than max_seq_len (32768)."}),
            Overflow, "marker:input_tokens_exceed",
        ),
        case(
            "LM Studio, github.com/dyad-sh/dyad/issues/925",
            json!({"body": {"error": "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 2048 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}}),
            Overflow, "marker:context_length",
        ),
        case(
            "LM Studio mid-generation overflow, github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1251",
            json!({"message": "Reached context length of 4096 tokens with model (arch: qwen3vlmoe) that does not currently support mid-generation context overflow. Try reloading with a larger context length or shortening the prompt/chat."}),
            Overflow, "marker:context_length",
        ),
        case(
            "Ollama /api/embed, github.com/nano-step/nano-brain/issues/208",
            json!({"status": 400, "body": "{\"error\":\"the input length exceeds the context length\"}"}),
            Overflow, "marker:context_length",
        ),
        case(
            "Ollama through n8n (status_code field), github.com/n8n-io/n8n/issues/11144",
            json!({"body": {"error": "input length exceeds maximum context length", "status_code": 400, "name": "ResponseError"}}),
            Overflow, "marker:maximum_context_length",
        ),
        case(
            "Hugging Face TGI, github.com/huggingface/chat-ui/issues/1149",
            json!({"status": 422, "message": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`"}),
            Overflow, "marker:inputs_tokens",
        ),
        case(
            "llama-cpp-python server, github.com/rllm-team/rllm/issues/55",
            json!({"status": 400, "message": "Requested tokens (516) exceed context window of 512"}),
            Overflow, "marker:context_window",
        ),
        case(
            "ds4 server context_exceeded, github.com/antirez/ds4/pull/150",
            json!({"status": 400, "body": {"error": {"message": "Prompt tokens (9000) exceeds context size (8192)", "type": "context_exceeded", "n_prompt_tokens": 9000, "n_ctx": 8192}}}),
            Overflow, "marker:context_exceeded",
        ),
        case(
            "Chinese gateway message on a 500, github.com/NIyueeE/ds-free-api/issues/36",
            json!({"status": 500, "message": "internal error: 输入内容超长，请缩短后重试"}),
            Overflow, "marker:zh_context",
        ),
        case(
            "Chinese client wording wrapping the OpenAI body, github.com/ChatGPTBox-dev/chatGPTBox/issues/367",
            json!({"message": "超出最大上下文长度, 请清理对话并重试"}),
            Overflow, "marker:zh_context",
        ),
        case(
            "Bedrock Mantle wording, as matched by BerriAI/litellm litellm/litellm_core_utils/exception_mapping_utils.py",
            json!({"status": 400, "body": {"error": {"type": "invalid_request_error", "message": "prompt tokens (250000) exceed model maximum (200000)"}}}),
            Overflow, "marker:input_tokens_exceed",
        ),
        // ---------------------------------------------------------------- payload size
        case(
            "nginx in front of an OpenAI-compatible endpoint, github.com/open-webui/open-webui/issues/3273",
            json!({"status": 413, "body": "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.26.1</center>\r\n</body>\r\n</html>\r\n<!-- a padding to disable MSIE and Chrome friendly error page -->"}),
            Payload, "marker:request_entity_too_large",
        ),
        case(
            "Anthropic 413 request_too_large, github.com/anthropics/claude-code/issues/14567",
            json!({"status": 413, "body": {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}}),
            Payload, "marker:request_too_large",
        ),
        case(
            "Anthropic 413 inside the SDK message, no status, github.com/anthropics/claude-code/issues/10314",
            json!({"message": "413 {\"error\":{\"type\":\"request_too_large\",\"message\":\"Request exceeds the maximum size\"}}"}),
            Payload, "marker:request_too_large",
        ),
        case(
            "Old llama.cpp server body limit, github.com/ggml-org/llama.cpp/pull/4500",
            json!({"status": 413, "message": "Payload Too Large"}),
            Payload, "marker:request_entity_too_large",
        ),
        case(
            "OmniRoute gateway body limit, github.com/diegosouzapw/OmniRoute/issues/8923",
            json!({"status": 413, "body": {"error": {"message": "Request body too large. Maximum allowed: 50 MB"}}}),
            Payload, "marker:body_size",
        ),
        // ---------------------------------------------------------------- rate limits
        case(
            "OpenAI 429 TPM, github.com/continuedev/continue/issues/11472",
            json!({"status": 429, "message": "429 Rate limit reached for gpt-4.1 in organization org-66tr5xhH5yhaqZAy6PAIy1Xi on tokens per min (TPM): Limit 30000, Used 18928, Requested 11159. Please try again in 174ms. Visit https://platform.openai.com/account/rate-limits to learn more."}),
            Rate, "status:429",
        ),
        case(
            "OpenAI TPM text without a status, github.com/FoundationAgents/MetaGPT/issues/523",
            json!({"message": "Rate limit reached for gpt-4 in organization org-uVqpjtJiKqvVJMVfvpaounIh on tokens per min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s. Visit https://platform.openai.com/account/rate-limits to learn more."}),
            Rate, "marker:rate_limit",
        ),
        case(
            "OpenAI 'Request too large' on TPM, no status (tokens alone are not overflow), github.com/TheR1D/shell_gpt/issues/653",
            json!({"body": {"error": {"message": "Request too large for gpt-4o in organization org-78asdf87asdf9aaa8976 on tokens per min (TPM): Limit 30000, Requested 31538. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
                "type": "tokens", "param": null, "code": "rate_limit_exceeded"}}}),
            Rate, "marker:rate_limit",
        ),
        case(
            "Groq answers TPM overruns with 413, github.com/assafelovic/gpt-researcher/issues/985",
            json!({"status": 413, "body": {"error": {"message": "Request too large for model `llama-3.1-70b-versatile` in organization `org_01hw8f0aa0ekmrn70ffm2zkdv1` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.",
                "type": "tokens", "code": "rate_limit_exceeded"}}}),
            Rate, "marker:rate_limit",
        ),
        case(
            "Anthropic input-tokens-per-minute limit (mentions input tokens and 'exceed'), no status, github.com/FoundationAgents/OpenManus/issues/746",
            json!({"body": {"error": {"code": "rate_limit_error", "message": "This request would exceed the rate limit for your organization of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.",
                "type": "invalid_request_error", "param": null}}}),
            Rate, "marker:rate_limit",
        ),
        case(
            "Anthropic 529 overloaded, github.com/anthropics/anthropic-sdk-typescript/issues/616",
            json!({"status": 529, "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}),
            Rate, "marker:overloaded",
        ),
        case(
            "OpenAI insufficient_quota, github.com/ChatGPTNextWeb/NextChat/issues/3123",
            json!({"body": {"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}}),
            Rate, "marker:quota",
        ),
        case(
            "Gemini 429 wrapped by the CLI, status only in the body, github.com/continuedev/continue/issues/10560",
            json!({"body": "{\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 429,\\n    \\\"message\\\": \\\"Resource has been exhausted (e.g. check quota).\\\",\\n    \\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\"\\n  }\\n}\\n\",\"code\":429,\"status\":\"Too Many Requests\"}}"}),
            Rate, "status:429",
        ),
        case(
            "Bedrock throttling: 'Too many tokens per day' is a rate limit, github.com/minorun365/agent-book/issues/29",
            json!({"message": "An error occurred (ThrottlingException) when calling the Converse operation (reached max retries: 4): Too many tokens per day, please wait before trying again."}),
            Rate, "marker:per_day_limit",
        ),
        // ---------------------------------------------------------------- other (no compaction)
        case(
            "OpenAI 400 unsupported_parameter, github.com/griptape-ai/ComfyUI-Griptape/issues/312",
            json!({"status": 400, "body": {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}}),
            Other, "none",
        ),
        case(
            "OpenAI 400 invalid messages (tool without call), github.com/run-llama/llama_index/issues/10493",
            json!({"status": 400, "body": {"error": {"message": "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.",
                "type": "invalid_request_error", "param": "messages.[0].role", "code": null}}}),
            Other, "none",
        ),
        case(
            "Azure OpenAI 400 invalid type for 'messages[0].content', github.com/danny-avila/LibreChat/issues/3111",
            json!({"status": 400, "message": "400 Invalid type for 'messages[0].content': expected a string, but got an array instead"}),
            Other, "none",
        ),
        case(
            "OpenAI 400 role enum, github.com/lss233/kirara-ai/issues/1025",
            json!({"status": 400, "body": {"error": {"message": "'' is not one of ['system', 'assistant', 'user', 'function'] - 'messages.21.role'", "type": "invalid_request_error", "param": null, "code": null}}}),
            Other, "none",
        ),
        case(
            "Anthropic 400 empty message content, github.com/anthropics/claude-code/issues/2663",
            json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.5: all messages must have non-empty content except for the optional final assistant message"}}}),
            Other, "none",
        ),
        case(
            "OpenAI 400 max_tokens over the output limit (tokens, but not the context), github.com/ChatGPTNextWeb/NextChat/issues/3199",
            json!({"status": 400, "body": {"error": {"message": "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas you provided 8192.", "type": "invalid_request_error", "param": "max_tokens", "code": null}}}),
            Other, "none",
        ),
        case(
            "Anthropic 400 max_tokens over the output limit, github.com/ChatGPTNextWeb/NextChat/issues/4964",
            json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}}}),
            Other, "none",
        ),
        case(
            "Groq 400 max_tokens vs context_window parameter, github.com/RooCodeInc/Roo-Code/issues/5729",
            json!({"status": 400, "message": "400 max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model"}),
            Other, "none",
        ),
        case(
            "Zhipu GLM max_tokens check, github.com/TokenRhythm/opensquilla/issues/782",
            json!({"status": 400, "body": {"code": 70000, "msg": "Exceeding the limiting length: [max_tokens should be less or equal to 131072]"}}),
            Other, "none",
        ),
        case(
            "Azure OpenAI content filter, github.com/vibrantlabsai/ragas/issues/649",
            json!({"status": 400, "body": {"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
                "type": null, "param": "prompt", "code": "content_filter", "status": 400,
                "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": false, "severity": "safe"}, "violence": {"filtered": true, "severity": "medium"}}}}}}),
            Other, "none",
        ),
        case(
            "OpenAI 401, github.com/chatanywhere/GPT_API_free/issues/62",
            json!({"status": 401, "body": {"error": {"message": "Incorrect API key provided: sk-VKMIs***************************************wjh3. You can find your API key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}}),
            Other, "none",
        ),
        case(
            "OpenAI 500, github.com/ai-genie/chatgpt-vscode/issues/100",
            json!({"status": 500, "body": {"error": {"message": "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID e5c949c8ec2c86be225544e5eefcbe4d in your email.)",
                "type": "server_error", "param": null, "code": null}}}),
            Other, "none",
        ),
        case(
            "OpenAI Responses string_above_max_length on another parameter (prompt_cache_key), from the error table of a public OpenAI-compatible test server found by code search",
            json!({"status": 400, "body": {"error": {"message": "Expected a string with maximum length 64, but got a string with length 65 instead.",
                "type": "invalid_request_error", "param": "prompt_cache_key", "code": "string_above_max_length"}}}),
            Other, "none",
        ),
    ]
}

#[test]
fn real_payloads_are_classified() {
    let cases = real_payloads();
    assert!(cases.len() >= 40, "only {} payloads", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let got = classify_value(&c.input);
        if got.kind != c.kind || got.reason != c.reason || got.compact_and_retry != (c.kind == Overflow) {
            failures
                .push(format!("{}\n    want {:?} {}, got {:?} {}", c.source, c.kind, c.reason, got.kind, got.reason));
        }
    }
    assert!(failures.is_empty(), "{} of {} misclassified:\n{}", failures.len(), cases.len(), failures.join("\n"));
    for kind in [Overflow, Payload, Rate, Other] {
        assert!(cases.iter().filter(|c| c.kind == kind).count() >= 5, "too few {kind:?} cases");
    }
}

#[test]
fn the_struct_api_agrees_with_the_json_api() {
    let e = ProviderError {
        status: Some(400),
        message: Some("This model's maximum context length is 8192 tokens. However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length of the messages or completion.".into()),
        code: Some("context_length_exceeded".into()),
        body: None,
    };
    let got = classify(&e);
    let counts = OverflowCounts {
        prompt_tokens: Some(7691),
        completion_tokens: Some(512),
        requested_tokens: Some(8203),
        limit: Some(8192),
        qualifier: Some(Qualifier::Exact),
    };
    assert_eq!(
        got,
        Classification { kind: Overflow, compact_and_retry: true, reason: "marker:context_length_exceeded", counts }
    );
    assert_eq!(got, classify_value(&json!({"status": 400, "message": e.message, "code": e.code})));

    let bare = ProviderError { status: Some(400), ..Default::default() };
    assert_eq!(classify(&bare).kind, Other);
    let raw = ProviderError { body: Some(Value::String("Request Entity Too Large".into())), ..Default::default() };
    assert_eq!(classify(&raw).kind, Payload);
}

fn kind_of(input: Value) -> (ErrorKind, &'static str) {
    let c = classify_value(&input);
    assert_eq!(c.compact_and_retry, c.kind == Overflow);
    (c.kind, c.reason)
}

#[test]
fn status_rules() {
    // A bare 400 is never an overflow (retry storms), whatever else is missing.
    assert_eq!(kind_of(json!({"status": 400})), (Other, "none"));
    assert_eq!(kind_of(json!({"status": 400, "message": "Bad Request"})), (Other, "none"));
    assert_eq!(kind_of(json!({"status": 400, "body": {}})), (Other, "none"));
    // 429 wins over everything, even an overflow marker.
    assert_eq!(kind_of(json!({"status": 429, "code": "context_length_exceeded"})), (Rate, "status:429"));
    // A bare 413, or one with no payload wording, counts as an overflow.
    assert_eq!(kind_of(json!({"status": 413})), (Overflow, "status:413"));
    assert_eq!(kind_of(json!({"status": 413, "message": "Error"})), (Overflow, "status:413"));
    assert_eq!(kind_of(json!({"status": "413"})), (Overflow, "status:413"));
    assert_eq!(kind_of(json!({"statusCode": 413.0})), (Overflow, "status:413"));
    // 413 with byte wording is a payload error; with token wording an overflow.
    assert_eq!(
        kind_of(json!({"status": 413, "message": "image exceeds 5 MB maximum: 7471104 bytes > 5242880 bytes"})),
        (Payload, "marker:bytes")
    );
    assert_eq!(
        kind_of(json!({"status": 413, "message": "prompt is too long: 250000 tokens > 200000 maximum"})),
        (Overflow, "marker:prompt_too_long")
    );
    // 5xx is other unless a marker says otherwise.
    for status in [500, 502, 503, 504, 529] {
        assert_eq!(kind_of(json!({ "status": status })), (Other, "none"), "{status}");
    }
    assert_eq!(
        kind_of(json!({"status": 503, "message": "The model is overloaded. Please try again later."})),
        (Rate, "marker:overloaded")
    );
    // An explicit status beats one found in the body; a body status is used when none is given.
    assert_eq!(kind_of(json!({"status": 400, "body": {"error": {"code": 429}}})), (Other, "none"));
    assert_eq!(kind_of(json!({"body": {"error": {"code": 429}}})), (Rate, "status:429"));
    assert_eq!(kind_of(json!({"code": 429})), (Rate, "status:429"));
    // Out-of-range or nonsense statuses are ignored.
    assert_eq!(kind_of(json!({"status": 4130})), (Other, "none"));
    assert_eq!(kind_of(json!({"status": -413})), (Other, "none"));
    assert_eq!(kind_of(json!({"status": "four hundred"})), (Other, "none"));
}

#[test]
fn string_above_max_length_depends_on_the_parameter() {
    let on_messages = json!({"status": 400, "body": {"error": {"message": "Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10883415 instead.",
        "type": "invalid_request_error", "param": "messages[1].content", "code": "string_above_max_length"}}});
    assert_eq!(kind_of(on_messages), (Payload, "marker:string_above_max_length"));
    let on_input = json!({"message": "Invalid 'input[0].content': string too long. Expected a string with maximum length 10485760, but got a string with length 12000000 instead."});
    assert_eq!(kind_of(on_input), (Payload, "marker:string_above_max_length"));
    let on_user = json!({"status": 400, "message": "Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length 100 instead.", "code": "string_above_max_length"});
    assert_eq!(kind_of(on_user), (Other, "none"));
}

/// Non-English phrasings. The Chinese ones above are real; these are the phrasings localized
/// gateways and translated clients use, written out (no public payload found for each).
#[test]
fn localized_phrasings() {
    let overflow = [
        ("请求的上下文长度超过模型限制", "marker:zh_context"),
        ("输入过长，请减少输入内容", "marker:zh_context"),
        ("token 数超过模型上限", "marker:zh_context"),
        ("超过模型最大输入长度", "marker:zh_context"),
        ("コンテキスト長を超えています", "marker:ja_context"),
        ("入力トークン数が上限を超えました", "marker:ja_context"),
        ("最大コンテキストを超過しました", "marker:ja_context"),
        ("La solicitud supera la longitud máxima del contexto del modelo", "marker:es_context"),
        ("El mensaje es demasiado largo para el modelo", "marker:es_too_long"),
        ("La requête dépasse la longueur maximale du contexte", "marker:fr_context"),
        ("Le prompt est trop long", "marker:fr_too_long"),
        ("Die Eingabe überschreitet die maximale Kontextlänge", "marker:de_context"),
        ("Die Nachricht ist zu lang", "marker:de_too_long"),
        ("DIE EINGABE IST ZU LANG", "marker:de_too_long"),
    ];
    for (message, reason) in overflow {
        assert_eq!(kind_of(json!({"status": 400, "message": message})), (Overflow, reason), "{message}");
    }
    assert_eq!(
        kind_of(json!({"status": 400, "message": "您当前使用该API的并发数过高，请降低并发"})),
        (Rate, "marker:zh_rate_limit")
    );
    assert_eq!(kind_of(json!({"message": "レート制限に達しました"})), (Rate, "marker:ja_rate_limit"));
    // "too long" about something that is not the prompt is not an overflow.
    assert_eq!(kind_of(json!({"status": 400, "message": "Le nom d'utilisateur est trop court"})), (Other, "none"));
    assert_eq!(kind_of(json!({"status": 400, "message": "Der Benutzername ist zu lang"})), (Other, "none"));
}

#[test]
fn echoed_request_fields_are_not_scanned() {
    // A validation error that echoes the user's prompt, which talks about context windows.
    let echo = json!({"status": 400, "body": {"object": "error", "message": "Invalid request",
        "detail": [{"type": "missing", "loc": ["body", "model"], "input": {"messages": [{"role": "user", "content": "Explain what a context window is and why prompt is too long errors happen."}]}}]}});
    assert_eq!(kind_of(echo), (Other, "none"));
    let echo = json!({"body": {"error": {"message": "bad"}, "messages": [{"content": "maximum context length"}], "prompt": "too many tokens"}});
    assert_eq!(kind_of(echo), (Other, "none"));
}

#[test]
fn anything_is_classified_without_panicking() {
    for v in [
        Value::Null,
        json!(true),
        json!(413),
        json!(-1.5),
        json!([]),
        json!({}),
        json!([null, 1, "x", [], {}]),
        json!({"status": null, "message": null, "code": null, "body": null, "error": null}),
        json!({"status": {}, "message": [], "code": {}, "body": 42}),
        json!({"status": 1e308, "code": -0.0}),
        json!(""),
        json!("   "),
        json!("{"),
        json!("[[[[[[[[[[[[[[[[[["),
        json!("{\"error\": "),
        json!("\u{0}\u{fffd}\u{10ffff}"),
    ] {
        let c = classify_value(&v);
        assert_eq!(c.kind, Other, "{v}");
        assert_eq!(c.reason, "none");
        assert!(!c.compact_and_retry);
    }
    // A bare string is read as the message.
    assert_eq!(
        kind_of(json!("prompt is too long: 208310 tokens > 200000 maximum")),
        (Overflow, "marker:prompt_too_long")
    );
    // A top-level array is read as a body.
    assert_eq!(
        kind_of(json!([{"error": {"code": "context_length_exceeded"}}])),
        (Overflow, "marker:context_length_exceeded")
    );
}

#[test]
fn work_is_bounded_on_hostile_input() {
    // A marker beyond the scanned prefix is not seen; one inside it is.
    let filler = "a".repeat(MAX_SCAN_BYTES + 10);
    assert_eq!(kind_of(json!({ "message": format!("{filler} context_length_exceeded") })), (Other, "none"));
    assert_eq!(
        kind_of(json!({ "message": format!("context_length_exceeded {filler}") })),
        (Overflow, "marker:context_length_exceeded")
    );
    // Many megabytes without a marker, multibyte text cut at the limit.
    let big = "上下文长度".repeat(1_000_000);
    assert_eq!(kind_of(json!({ "message": "ok", "body": format!("xx{big}") })), (Overflow, "marker:zh_context"));
    let big = "é".repeat(3_000_000);
    assert_eq!(kind_of(json!({ "body": big })), (Other, "none"));
    // Deeply nested raw JSON text (beyond serde_json's recursion limit) is read as text.
    let deep = format!("{}context_length_exceeded{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(kind_of(json!({ "body": deep })), (Other, "none"));
    // Too deep to parse, so it is scanned as text, where the marker is.
    let deep_obj = format!("{}\"context_length_exceeded\"{}", "{\"a\":".repeat(1000), "}".repeat(1000));
    assert_eq!(kind_of(json!({ "body": deep_obj })), (Overflow, "marker:context_length_exceeded"));
    // Deeply nested values: the marker below the depth limit is not reached.
    let mut nested = json!({"code": "context_length_exceeded"});
    for _ in 0..200 {
        nested = json!({ "error": nested });
    }
    assert_eq!(kind_of(json!({ "body": nested })), (Other, "none"));
    let mut shallow = json!({"code": "context_length_exceeded"});
    for _ in 0..5 {
        shallow = json!({ "error": shallow });
    }
    assert_eq!(kind_of(json!({ "body": shallow })), (Overflow, "marker:context_length_exceeded"));
    // Very wide bodies: only the first nodes are visited.
    let mut wide: Vec<Value> = (0..200_000).map(|_| json!({})).collect();
    wide.push(json!("context_length_exceeded"));
    assert_eq!(kind_of(json!({ "body": wide })), (Other, "none"));
    // Strings that each embed a JSON document: only a few are parsed, the rest are plain text.
    let embedded: Vec<Value> = (0..10_000).map(|i| json!(format!("{{\"n\": {i}}}"))).collect();
    assert_eq!(kind_of(json!({ "body": embedded })), (Other, "none"));
}
