//! A realistic request in each of the five wire formats (OpenAI and the AI SDK and Responses as a
//! messages array; Anthropic and Gemini as `{ system, messages }`), shared by the format tests.

use serde_json::Value;

const ONE_PX_PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

pub fn openai_fixture() -> Value {
    let text = format!(
        r#"[
      {{"role": "developer", "content": "Be brief. 简短回答。"}},
      {{"role": "user", "id": "u1", "name": "ana", "content": [
        {{"type": "text", "text": "Look 👀"}},
        {{"type": "image_url", "image_url": {{"url": "data:image/png;base64,{ONE_PX_PNG_B64}", "detail": "auto"}}, "width": 10}},
        {{"type": "input_audio", "input_audio": {{"data": "AAAA", "format": "mp3"}}}},
        {{"type": "file", "file": {{"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE", "text": "A"}}}},
        {{"type": "file", "file": {{"file_id": "f1"}}, "text": "B"}}
      ], "ctxguard": {{"pinned": true}}}},
      {{"role": "assistant", "content": null, "tool_calls": [
        {{"id": "call_1", "type": "function", "function": {{"name": "get", "arguments": "{{\"a\":1}}"}}}},
        {{"id": "call_2", "type": "function", "function": {{"name": "get", "arguments": "{{}}"}}}}
      ]}},
      {{"role": "tool", "tool_call_id": "call_1", "content": "one"}},
      {{"role": "tool", "tool_call_id": "call_2", "content": [{{"type": "text", "text": "two"}}]}},
      {{"role": "assistant", "content": [{{"type": "refusal", "refusal": "no"}}], "function_call": {{"name": "f", "arguments": "{{}}"}}}},
      {{"role": "function", "name": "f", "content": null}},
      {{"role": "assistant", "content": "x", "tool_calls": [{{"id": "c", "type": "custom", "custom": {{"name": "sql", "input": "SELECT 1"}}}}]}}
    ]"#
    );
    serde_json::from_str(&text).unwrap()
}

pub fn anthropic_fixture() -> Value {
    let text = format!(
        r#"{{"system": [{{"type": "text", "text": "Sys"}}, {{"type": "text", "text": "Cached", "cache_control": {{"type": "ephemeral"}}}}],
      "messages": [
      {{"role": "user", "id": "u1", "content": [
        {{"type": "text", "text": "Lies das 📄"}},
        {{"type": "document", "source": {{"type": "text", "media_type": "text/plain", "data": "Hallo"}}, "title": "t.txt", "citations": {{"enabled": true}}}},
        {{"type": "document", "source": {{"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}, "text": "pdf text"}},
        {{"type": "document", "source": {{"type": "content", "content": [{{"type": "text", "text": "c"}}]}}}},
        {{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{ONE_PX_PNG_B64}"}}}},
        {{"type": "image", "source": {{"type": "url", "url": "https://x.example/a.jpg"}}, "width": 5, "height": 6}}
      ], "ctxguard": {{"pinned": true}}}},
      {{"role": "assistant", "content": [
        {{"type": "thinking", "thinking": "hmm", "signature": "sig"}},
        {{"type": "text", "text": "Vorher"}},
        {{"type": "tool_use", "id": "toolu_1", "name": "get", "input": {{"a": [1, 2.5, {{"b": null}}]}}}},
        {{"type": "tool_use", "id": "toolu_2", "name": "get", "input": {{}}, "cache_control": {{"type": "ephemeral"}}}},
        {{"type": "text", "text": "Nachher"}}
      ]}},
      {{"role": "user", "content": [
        {{"type": "tool_result", "tool_use_id": "toolu_1", "content": "one", "is_error": true}},
        {{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{{"type": "text", "text": "two"}}], "ctxguard": {{"compactedToolOutput": true}}}},
        {{"type": "text", "text": "weiter"}}
      ]}},
      {{"role": "assistant", "content": [{{"type": "tool_use", "id": "toolu_3", "name": "x", "input": {{}}}}]}},
      {{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": "toolu_3"}}], "meta": 1}},
      {{"role": "assistant", "content": "fertig"}}
    ]}}"#
    );
    serde_json::from_str(&text).unwrap()
}

pub fn ai_sdk_fixture() -> Value {
    let text = format!(
        r#"[
      {{"role": "system", "content": "Be brief. 简短回答。", "providerOptions": {{"anthropic": {{"cacheControl": {{"type": "ephemeral"}}}}}}}},
      {{"role": "user", "id": "u1", "content": [
        {{"type": "text", "text": "Look 👀"}},
        {{"type": "image", "image": "data:image/png;base64,{ONE_PX_PNG_B64}", "mediaType": "image/png", "width": 10}},
        {{"type": "file", "data": "SGFsbG8=", "mediaType": "text/plain", "filename": "a.txt"}},
        {{"type": "file", "data": "https://x.example/a.pdf", "mediaType": "application/pdf"}}
      ], "ctxguard": {{"pinned": true}}}},
      {{"role": "assistant", "content": [
        {{"type": "reasoning", "text": "hmm", "providerOptions": {{"anthropic": {{"signature": "sig"}}}}}},
        {{"type": "text", "text": "Vorher"}},
        {{"type": "tool-call", "toolCallId": "call_1", "toolName": "get", "input": {{"a": [1, 2.5, {{"b": null}}]}}}},
        {{"type": "tool-call", "toolCallId": "call_2", "toolName": "get", "input": {{}}, "providerOptions": {{"openai": {{"x": 1}}}}}},
        {{"type": "tool-approval-request", "approvalId": "ap", "toolCallId": "call_2"}}
      ]}},
      {{"role": "tool", "content": [
        {{"type": "tool-result", "toolCallId": "call_1", "toolName": "get", "output": {{"type": "json", "value": {{"k": [1, "zwei"]}}}}}},
        {{"type": "tool-result", "toolCallId": "call_2", "toolName": "get", "output": {{"type": "content", "value": [
          {{"type": "text", "text": "two"}}, {{"type": "image-data", "data": "{ONE_PX_PNG_B64}", "mediaType": "image/png"}}
        ]}}, "ctxguard": {{"compactedToolOutput": true}}}},
        {{"type": "tool-approval-response", "approvalId": "ap", "approved": true}}
      ], "providerOptions": {{"a": {{}}}}}},
      {{"role": "user", "content": "weiter"}},
      {{"role": "assistant", "content": [{{"type": "reasoning", "text": "now"}}, {{"type": "tool-call", "toolCallId": "c3", "toolName": "x", "args": {{}}}}]}},
      {{"role": "tool", "content": [{{"type": "tool-result", "toolCallId": "c3", "toolName": "x", "output": {{"type": "execution-denied"}}}},
        {{"type": "tool-result", "toolCallId": "c3", "toolName": "x", "result": "v4"}}]}},
      {{"role": "assistant", "content": "fertig"}}
    ]"#
    );
    serde_json::from_str(&text).unwrap()
}

pub fn responses_fixture() -> Value {
    let text = format!(
        r#"[
      {{"role": "developer", "content": "Be brief. 简短回答。"}},
      {{"type": "message", "role": "user", "id": "u1", "content": [
        {{"type": "input_text", "text": "Look 👀"}},
        {{"type": "input_image", "image_url": "data:image/png;base64,{ONE_PX_PNG_B64}", "detail": "auto"}},
        {{"type": "input_image", "file_id": "file-1", "detail": "low"}},
        {{"type": "input_file", "filename": "a.txt", "file_data": "data:text/plain;base64,SGFsbG8="}},
        {{"type": "input_audio", "input_audio": {{"data": "AAAA", "format": "mp3"}}}}
      ], "ctxguard": {{"pinned": true}}}},
      {{"type": "reasoning", "id": "rs_1", "summary": [{{"type": "summary_text", "text": "s"}}], "encrypted_content": "gAAAA"}},
      {{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get", "arguments": "{{\"a\":1}}", "status": "completed"}},
      {{"type": "custom_tool_call", "call_id": "call_2", "name": "sql", "input": "SELECT 1"}},
      {{"type": "function_call_output", "call_id": "call_1", "output": "one"}},
      {{"type": "custom_tool_call_output", "call_id": "call_2", "output": [{{"type": "input_text", "text": "two"}}]}},
      {{"type": "computer_call", "call_id": "call_3", "action": {{"type": "screenshot"}}}},
      {{"type": "computer_call_output", "call_id": "call_3", "output": {{"type": "computer_screenshot", "file_id": "f"}}}},
      {{"id": "msg_1", "type": "message", "role": "assistant", "content": [{{"type": "output_text", "text": "x", "annotations": []}}, {{"type": "refusal", "refusal": "no"}}]}},
      {{"type": "item_reference", "id": "msg_0"}},
      {{"type": "function_call_output", "call_id": "on_server", "output": "kept"}}
    ]"#
    );
    serde_json::from_str(&text).unwrap()
}

pub fn gemini_fixture() -> Value {
    let text = format!(
        r#"{{"system": {{"parts": [{{"text": "Sys"}}, {{"text": "More"}}]}},
      "messages": [
      {{"role": "user", "parts": [
        {{"text": "Lies das 📄"}},
        {{"inlineData": {{"mimeType": "text/plain", "data": "SGFsbG8=", "displayName": "t.txt"}}}},
        {{"inlineData": {{"mimeType": "image/png", "data": "{ONE_PX_PNG_B64}"}}}},
        {{"fileData": {{"mimeType": "application/pdf", "fileUri": "gs://b/a.pdf"}}}},
        {{"inlineData": {{"mimeType": "audio/wav", "data": "UklG"}}}}
      ], "ctxguard": {{"pinned": true}}}},
      {{"role": "model", "parts": [
        {{"text": "hmm", "thought": true}},
        {{"functionCall": {{"name": "get", "args": {{"a": [1, 2.5, {{"b": null}}]}}}}, "thoughtSignature": "c2ln"}},
        {{"functionCall": {{"id": "c2", "name": "get", "args": {{}}}}}},
        {{"executableCode": {{"language": "PYTHON", "code": "print(1)"}}}}
      ]}},
      {{"role": "user", "parts": [
        {{"functionResponse": {{"name": "get", "response": {{"output": "one"}}}}}},
        {{"functionResponse": {{"id": "c2", "name": "get", "response": {{"rows": [1, 2], "n": 2}}}}, "ctxguard": {{"compactedToolOutput": true}}}},
        {{"text": "weiter"}}
      ]}},
      {{"parts": [{{"text": "ohne Rolle"}}]}}
    ]}}"#
    );
    serde_json::from_str(&text).unwrap()
}
