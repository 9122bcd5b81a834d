//! Published reference figures for OpenAI chat requests: messages (+ functions/tools) -> the
//! `prompt_tokens` the API reported. Every case names its source (repository + path). The
//! requests are written in OpenAI wire JSON and converted here with a small test-only converter
//! (the real adapter lives in `format/`).
//!
//! Sources:
//! - [cookbook] openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb — figures
//!   printed next to `response.usage.prompt_tokens` ("counted by the OpenAI API").
//! - [hmarr] hmarr/openai-chat-tokens, src/token-counts.test.ts (commit 39be88f) — gpt-3.5-turbo
//!   (cl100k_base); the suite checks the figures against the API (`validate` / `validateAll`).
//!   The same figures are asserted against the live API by nyno-ai/openai-token-counter,
//!   tests/counter/test_token_counter.py with tests/counter/resources.py.
//! - [pamelafox] pamelafox/openai-messages-token-helper, tests/messages.py, tests/image_messages.py,
//!   tests/functions.py — checked against the API by tests/verify_openai.py and
//!   tests/verify_functions.py.
//! - [gpt-tokenizer] niieani/gpt-tokenizer, src/fixtures/functionCallingTestCases.ts — the hmarr
//!   cases recomputed for gpt-4o (o200k_base) by gpt-tokenizer's port of the same algorithm; NOT
//!   API-verified (consistency figures).

use ctxguard::count::{count_request_with, ImageRule, Profile, ToolChoice, ToolRule};
use ctxguard::message::{Content, ImageSource, Message, Part, Role, ToolCall, ToolDef, Wire};
use ctxguard::tokens::Encoding;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Test-only conversion from OpenAI wire JSON.

fn to_message(v: &Value) -> Message {
    let wire_role = v["role"].as_str().unwrap_or("user");
    let (role, wire) = match wire_role {
        "system" => (Role::System, None),
        "developer" => (Role::System, Some("developer")),
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "tool" => (Role::Tool, None),
        "function" => (Role::Tool, Some("function")),
        other => panic!("role {other}"),
    };
    let content = match &v["content"] {
        Value::String(s) => Content::Text(s.as_str().into()),
        Value::Array(parts) => Content::Parts(parts.iter().map(to_part).collect()),
        _ => Content::Text(Default::default()),
    };
    let mut tool_calls = Vec::new();
    let mut legacy = false;
    if let Some(fc) = v.get("function_call") {
        legacy = true;
        tool_calls.push(ToolCall {
            id: Default::default(),
            name: fc["name"].as_str().unwrap().into(),
            arguments: fc["arguments"].as_str().unwrap_or("").into(),
            extra: Default::default(),
        });
    }
    if let Some(calls) = v.get("tool_calls").and_then(Value::as_array) {
        for c in calls {
            tool_calls.push(ToolCall {
                id: c["id"].as_str().unwrap_or("").into(),
                name: c["function"]["name"].as_str().unwrap().into(),
                arguments: c["function"]["arguments"].as_str().unwrap_or("").into(),
                extra: Default::default(),
            });
        }
    }
    Message {
        role,
        content,
        tool_calls,
        tool_call_id: v.get("tool_call_id").and_then(Value::as_str).map(Into::into),
        name: v.get("name").and_then(Value::as_str).map(str::to_string),
        wire: Wire { role: wire.map(str::to_string), legacy_function_call: legacy, ..Default::default() },
        ..Default::default()
    }
}

fn to_part(v: &Value) -> Part {
    match v["type"].as_str().unwrap() {
        "text" => Part::Text { text: v["text"].as_str().unwrap().into(), extra: Default::default() },
        "image_url" => {
            let img = &v["image_url"];
            Part::Image {
                source: ImageSource::Url(img["url"].as_str().unwrap().to_string()),
                detail: img.get("detail").and_then(Value::as_str).map(str::to_string),
                // The pixel size the adapter reads from the data-URL header; given explicitly here.
                width: img.get("width").and_then(Value::as_u64).map(|w| w as u32),
                height: img.get("height").and_then(Value::as_u64).map(|h| h as u32),
                extra: Default::default(),
            }
        }
        other => panic!("part {other}"),
    }
}

/// `functions: [{name, description, parameters}]` or `tools: [{type, function: {...}}]`.
fn to_tools(v: &Value) -> Vec<ToolDef> {
    v.as_array()
        .map(|arr| {
            arr.iter()
                .map(|t| {
                    let f = t.get("function").unwrap_or(t);
                    ToolDef {
                        name: f["name"].as_str().unwrap().to_string(),
                        description: f.get("description").and_then(Value::as_str).map(str::to_string),
                        parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
                        extra: Default::default(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

fn to_choice(v: &Value) -> ToolChoice {
    match v {
        Value::Null => ToolChoice::Auto,
        Value::String(s) if s == "auto" => ToolChoice::Auto,
        Value::String(s) if s == "none" => ToolChoice::None,
        Value::String(s) if s == "required" => ToolChoice::Required,
        // tools API: {"type":"function","function":{"name":...}}
        Value::Object(o) if o.contains_key("function") => {
            ToolChoice::Named(v["function"]["name"].as_str().unwrap().to_string())
        }
        // legacy function_call: {"name": ...}
        Value::Object(_) => ToolChoice::NamedFunction(v["name"].as_str().unwrap().to_string()),
        other => panic!("tool choice {other}"),
    }
}

struct Case {
    source: &'static str,
    encoding: Encoding,
    request: Value,
    expected: usize,
}

/// Which rendering of nested property descriptions a case is checked against (see
/// `ToolRule::OpenaiNamespace`): the 2023 `functions` figures were taken on models that drop them.
#[derive(Clone, Copy)]
enum Era {
    Functions2023,
    Current,
}

fn profile(encoding: Encoding, era: Era) -> Profile {
    let mut p = Profile::openai(encoding, ImageRule::GPT_4O);
    if let Era::Functions2023 = era {
        p.tool_rule = ToolRule::OpenaiNamespace { nested_descriptions: false };
    }
    p
}

fn count(encoding: Encoding, era: Era, request: &Value) -> usize {
    let messages: Vec<Message> = request["messages"].as_array().unwrap().iter().map(to_message).collect();
    let tools = request.get("functions").or_else(|| request.get("tools")).map(to_tools).unwrap_or_default();
    let choice = to_choice(request.get("function_call").or_else(|| request.get("tool_choice")).unwrap_or(&Value::Null));
    count_request_with(&profile(encoding, era), &messages, &tools, &choice).total
}

fn check(era: Era, cases: &[Case]) {
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let got = count(c.encoding, era, &c.request);
        if got != c.expected {
            failures.push(format!(
                "#{i} [{}] {:?}: expected {}, got {} ({:+}) — {}",
                c.source,
                c.encoding,
                c.expected,
                got,
                got as i64 - c.expected as i64,
                c.request
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

const CL: Encoding = Encoding::Cl100kBase;
const O2: Encoding = Encoding::O200kBase;

// ---------------------------------------------------------------------------------------------
// Shared request bodies.

fn cookbook_messages() -> Value {
    json!([
        {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
        {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
        {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
        {"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
        {"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better."},
        {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."}
    ])
}

fn cookbook_tools_request() -> Value {
    json!({
        "tools": [{
            "type": "function",
            "function": {
                "name": "get_current_weather",
                "description": "Get the current weather in a given location",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                        "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
                    },
                    "required": ["location"]
                }
            }
        }],
        "messages": [
            {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
            {"role": "user", "content": "What's the weather like in San Francisco?"}
        ]
    })
}

fn msgs(v: Value) -> Value {
    json!({ "messages": v })
}

// ---------------------------------------------------------------------------------------------
// openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb

#[test]
fn cookbook_chat_messages() {
    check(
        Era::Current,
        &[
            // gpt-3.5-turbo, gpt-4-0613, gpt-4: "129 prompt tokens counted by the OpenAI API."
            Case {
                source: "openai/openai-cookbook examples/How_to_count_tokens_with_tiktoken.ipynb §6",
                encoding: CL,
                request: msgs(cookbook_messages()),
                expected: 129,
            },
            // gpt-4o, gpt-4o-mini: "124 prompt tokens counted by the OpenAI API."
            Case {
                source: "openai/openai-cookbook examples/How_to_count_tokens_with_tiktoken.ipynb §6",
                encoding: O2,
                request: msgs(cookbook_messages()),
                expected: 124,
            },
        ],
    );
}

#[test]
fn cookbook_tools() {
    check(
        Era::Current,
        &[
            // gpt-3.5-turbo, gpt-4: "105 prompt tokens counted by the OpenAI API."
            Case {
                source: "openai/openai-cookbook examples/How_to_count_tokens_with_tiktoken.ipynb §7",
                encoding: CL,
                request: cookbook_tools_request(),
                expected: 105,
            },
            // gpt-4o, gpt-4o-mini: "101 prompt tokens counted by the OpenAI API."
            Case {
                source: "openai/openai-cookbook examples/How_to_count_tokens_with_tiktoken.ipynb §7",
                encoding: O2,
                request: cookbook_tools_request(),
                expected: 101,
            },
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// hmarr/openai-chat-tokens, src/token-counts.test.ts (gpt-3.5-turbo, cl100k_base)

fn hmarr_cases() -> Vec<(Value, usize)> {
    let empty_params = json!({"type": "object", "properties": {}});
    vec![
        (
            msgs(
                json!([{"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."}]),
            ),
            25,
        ),
        (
            msgs(
                json!([{"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."}]),
            ),
            20,
        ),
        (
            msgs(
                json!([{"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."}]),
            ),
            19,
        ),
        (
            msgs(
                json!([{"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."}]),
            ),
            28,
        ),
        (
            msgs(
                json!([{"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better."}]),
            ),
            26,
        ),
        (
            msgs(
                json!([{"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."}]),
            ),
            26,
        ),
        (msgs(json!([{"role": "user", "content": "hello"}])), 8),
        (msgs(json!([{"role": "user", "content": "hello world"}])), 9),
        (msgs(json!([{"role": "system", "content": "hello"}])), 8),
        (msgs(json!([{"role": "system", "content": "hello:"}])), 9),
        (
            msgs(json!([
                {"role": "system", "content": "# Important: you're the best robot"},
                {"role": "user", "content": "hello robot"},
                {"role": "assistant", "content": "hello world"}
            ])),
            27,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{"name": "foo", "parameters": empty_params}]}),
            31,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{"name": "foo", "parameters": empty_params}], "function_call": "none"}),
            32,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{"name": "foo", "parameters": empty_params}], "function_call": "auto"}),
            31,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{"name": "foo", "parameters": empty_params}], "function_call": {"name": "foo"}}),
            36,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{"name": "foo", "description": "Do a foo", "parameters": empty_params}]}),
            36,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "bing_bong", "description": "Do a bing bong",
                "parameters": {"type": "object", "properties": {"foo": {"type": "string"}}}
            }]}),
            49,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "bing_bong", "description": "Do a bing bong",
                "parameters": {"type": "object", "properties": {"foo": {"type": "string"}, "bar": {"type": "number", "description": "A number"}}}
            }]}),
            57,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "bing_bong", "description": "Do a bing bong",
                "parameters": {"type": "object", "properties": {"foo": {"type": "object", "properties": {
                    "bar": {"type": "string", "enum": ["a", "b", "c"]},
                    "baz": {"type": "boolean"}
                }}}}
            }]}),
            68,
        ),
        (
            msgs(
                json!([{"role": "user", "content": "hello world"}, {"role": "function", "name": "do_stuff", "content": "{}"}]),
            ),
            15,
        ),
        (
            msgs(
                json!([{"role": "user", "content": "hello world"}, {"role": "function", "name": "do_stuff", "content": "{\"foo\": \"bar\", \"baz\": 1.5}"}]),
            ),
            28,
        ),
        (
            msgs(
                json!([{"role": "function", "name": "dance_the_tango", "content": "{\"a\": { \"b\" : { \"c\": false}}}"}]),
            ),
            24,
        ),
        (
            msgs(
                json!([{"role": "assistant", "content": "", "function_call": {"name": "do_stuff", "arguments": "{\"foo\": \"bar\", \"baz\": 1.5}"}}]),
            ),
            26,
        ),
        (
            msgs(
                json!([{"role": "assistant", "content": "", "function_call": {"name": "do_stuff", "arguments": "{\"foo\":\"bar\", \"baz\":\n\n 1.5}"}}]),
            ),
            25,
        ),
        (
            json!({
                "messages": [
                    {"role": "system", "content": "You are an AI assistant trained to foo or bar"},
                    {"role": "user", "content": "My name is suzie"},
                    {"role": "function", "name": "foo", "content": "{\"res\":{\"kind\":\"user\",\"name\":\"suzie\"}}"},
                    {"role": "user", "content": "I want to post a message with the text \"hello world\""},
                    {"role": "function", "name": "foo", "content": "{\"res\":{\"kind\":\"post\",\"text\":\"hello world\"}}"}
                ],
                "functions": [{
                    "name": "foo", "description": "Return the foo or the bar",
                    "parameters": {
                        "type": "object",
                        "properties": {"res": {
                            "anyOf": [
                                {"type": "object", "properties": {"kind": {"type": "string", "const": "post"}, "text": {"type": "string"}}, "required": ["kind", "text"], "additionalProperties": false},
                                {"type": "object", "properties": {"kind": {"type": "string", "const": "user"}, "name": {"type": "string", "enum": ["jane", "suzie", "adam"]}}, "required": ["kind", "name"], "additionalProperties": false}
                            ],
                            "description": "The foo or the bar"
                        }},
                        "required": ["res"],
                        "additionalProperties": false
                    }
                }],
                "function_call": {"name": "foo"}
            }),
            158,
        ),
        (
            json!({
                "messages": [{"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}],
                "functions": [{"name": "do_stuff", "parameters": {"type": "object", "properties": {"foo": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}, "baz": {"type": "boolean"}}}
                ]}}}}]
            }),
            52,
        ),
        (
            json!({
                "messages": [{"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}],
                "functions": [{"name": "do_stuff", "parameters": {"type": "object", "properties": {"foo": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}, "baz": {"type": "boolean"}}},
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "b"}, "qux": {"type": "number"}}},
                    {"type": "object", "properties": {"kind": {"type": "string", "const": "c"}, "idk": {"type": "string"}}}
                ]}}}}]
            }),
            80,
        ),
        (
            json!({
                "messages": [{"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}],
                "functions": [{"name": "do_stuff", "parameters": {"type": "object", "properties": {"foo": {"anyOf": [
                    {"type": "string", "const": "a"}, {"type": "number"}
                ]}}}}]
            }),
            44,
        ),
        (
            json!({"messages": [{"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}], "functions": [{"name": "do_stuff", "parameters": empty_params}]}),
            35,
        ),
        (
            json!({"messages": [{"role": "system", "content": "Hello:"}, {"role": "user", "content": "Hi there"}], "functions": [{"name": "do_stuff", "parameters": empty_params}]}),
            35,
        ),
        (
            json!({"messages": [{"role": "system", "content": "Hello:"}, {"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}], "functions": [{"name": "do_stuff", "parameters": empty_params}]}),
            40,
        ),
        (
            json!({
                "messages": [{"role": "system", "content": "Hello:"}, {"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}],
                "functions": [{"name": "do_stuff", "parameters": empty_params}, {"name": "do_other_stuff", "parameters": empty_params}]
            }),
            49,
        ),
        (
            json!({
                "messages": [{"role": "system", "content": "Hello:"}, {"role": "system", "content": "Hello"}, {"role": "user", "content": "Hi there"}],
                "functions": [{"name": "do_stuff", "parameters": empty_params}, {"name": "do_other_stuff", "parameters": empty_params}],
                "function_call": {"name": "do_stuff"}
            }),
            55,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "get_recipe",
                "parameters": {
                    "type": "object",
                    "required": ["ingredients", "instructions", "time_to_cook"],
                    "properties": {
                        "ingredients": {"type": "array", "items": {
                            "type": "object",
                            "required": ["name", "unit", "amount"],
                            "properties": {
                                "name": {"type": "string"},
                                "unit": {"enum": ["grams", "ml", "cups", "pieces", "teaspoons"], "type": "string"},
                                "amount": {"type": "number"}
                            }
                        }},
                        "instructions": {"type": "array", "items": {"type": "string"}, "description": "Steps to prepare the recipe (no numbering)"},
                        "time_to_cook": {"type": "number", "description": "Total time to prepare the recipe in minutes"}
                    }
                }
            }]}),
            106,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "function", "description": "description",
                "parameters": {"type": "object", "properties": {"quality": {"type": "object", "properties": {
                    "pros": {"type": "array", "items": {"type": "string"}, "description": "Write 3 points why this text is well written"}
                }}}}
            }]}),
            46,
        ),
        (
            json!({"messages": [{"role": "user", "content": "hello"}], "functions": [{
                "name": "function", "description": "desctiption1",
                "parameters": {
                    "type": "object", "description": "desctiption2",
                    "properties": {
                        "mainField": {"type": "string", "description": "description3"},
                        "field number one": {
                            "type": "object", "description": "description4",
                            "properties": {
                                "yesNoField": {"type": "string", "description": "description5", "enum": ["Yes", "No"]},
                                "howIsInteresting": {"type": "string", "description": "description6"},
                                "scoreInteresting": {"type": "number", "description": "description7"},
                                "isInteresting": {"type": "string", "description": "description8", "enum": ["Yes", "No"]}
                            }
                        }
                    }
                }
            }]}),
            96,
        ),
    ]
}

#[test]
fn hmarr_openai_chat_tokens_gpt35() {
    let cases: Vec<Case> = hmarr_cases()
        .into_iter()
        .map(|(request, expected)| Case {
            source: "hmarr/openai-chat-tokens src/token-counts.test.ts",
            encoding: CL,
            request,
            expected,
        })
        .collect();
    check(Era::Functions2023, &cases);
}

// ---------------------------------------------------------------------------------------------
// niieani/gpt-tokenizer, src/fixtures/functionCallingTestCases.ts (gpt-4o, o200k_base).
// The hmarr cases (without the anyOf ones) recomputed by gpt-tokenizer's port of the hmarr
// algorithm; not API-verified. Same order as `hmarr_cases()`, anyOf cases (index 24..=27) absent.

#[test]
fn gpt_tokenizer_port_gpt4o() {
    let expected_o200k: [(usize, usize); 31] = [
        (0, 24),
        (1, 20),
        (2, 19),
        (3, 27),
        (4, 24),
        (5, 25),
        (6, 8),
        (7, 9),
        (8, 8),
        (9, 9),
        (10, 26),
        (11, 31),
        (12, 32),
        (13, 31),
        (14, 36),
        (15, 35),
        (16, 45),
        (17, 52),
        (18, 64),
        (19, 16),
        (20, 29),
        (21, 25),
        (22, 27),
        (23, 26),
        (28, 36),
        (29, 36),
        (30, 41),
        (31, 51),
        (32, 58),
        (33, 105),
        (34, 45),
    ];
    let all = hmarr_cases();
    let mut cases: Vec<Case> = expected_o200k
        .iter()
        .map(|&(i, expected)| Case {
            source: "niieani/gpt-tokenizer src/fixtures/functionCallingTestCases.ts",
            encoding: O2,
            request: all[i].0.clone(),
            expected,
        })
        .collect();
    // The last fixture (nested descriptions, "field number one"): 93.
    cases.push(Case {
        source: "niieani/gpt-tokenizer src/fixtures/functionCallingTestCases.ts",
        encoding: O2,
        request: all[35].0.clone(),
        expected: 93,
    });
    check(Era::Functions2023, &cases);
}

// ---------------------------------------------------------------------------------------------
// pamelafox/openai-messages-token-helper, tests/messages.py and tests/image_messages.py.
// Single messages; the figure includes the reply priming. `count` is for the non-omni models
// (cl100k_base), `count_omni` for gpt-4o (o200k_base).

fn one(m: Value) -> Value {
    msgs(json!([m]))
}

#[test]
fn pamelafox_messages() {
    let src = "pamelafox/openai-messages-token-helper tests/messages.py";
    let data: Vec<(Value, usize, usize)> = vec![
        (json!({"role": "system", "content": "You are a bot."}), 12, 12),
        (
            json!({"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."}),
            25,
            24,
        ),
        (
            json!({"role": "system", "content": "Assistant helps the company employees with their healthcare plan questions, and questions about the employee handbook. Be brief in your answers."}),
            31,
            31,
        ),
        (json!({"role": "system", "content": "á"}), 8, 8),
        (
            json!({"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."}),
            20,
            20,
        ),
        (json!({"role": "user", "content": "Hello, how are you?"}), 13, 13),
        (json!({"role": "user", "content": "á"}), 8, 8),
        (json!({"role": "user", "content": "What happens in a performance review?"}), 14, 14),
        (
            json!({"role": "assistant", "content": "During the performance review at Contoso Electronics, the supervisor will discuss the employee's performance over the past year and provide feedback on areas for improvement. They will also provide an opportunity for the employee to discuss their goals and objectives for the upcoming year. The review is a two-way dialogue between managers and employees, and employees will receive a written summary of their performance review which will include a rating of their performance, feedback, and goals and objectives for the upcoming year [employee_handbook-3.pdf]."}),
            106,
            106,
        ),
        (
            json!({"role": "assistant", "content": "The supervisor will discuss the employee's performance and provide feedback on areas for improvement. They will also provide an opportunity for the employee to discuss their goals and objectives for the upcoming year. The review is a two-way dialogue between managers and employees, and employees will receive a written summary of their performance review which will include a rating of their performance, feedback, and goals for the upcoming year [employee_handbook-3.pdf]."}),
            91,
            91,
        ),
        (json!({"role": "user", "content": "Is there a dress code?"}), 13, 13),
        (
            json!({"role": "assistant", "content": "Yes, there is a dress code at Contoso Electronics. Look sharp! [employee_handbook-1.pdf]"}),
            30,
            30,
        ),
        (json!({"role": "user", "content": "What does a Product Manager do?"}), 14, 14),
    ];
    let mut cases = Vec::new();
    for (m, cl, o2) in data {
        cases.push(Case { source: src, encoding: CL, request: one(m.clone()), expected: cl });
        cases.push(Case { source: src, encoding: O2, request: one(m), expected: o2 });
    }
    check(Era::Current, &cases);
}

const TINY_PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z/C/HgAGgwJ/lK3Q6wAAAABJRU5ErkJggg==";

fn image_message(text: &str, detail: &str, width: u32, height: u32) -> Value {
    one(json!({"role": "user", "content": [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": TINY_PNG, "detail": detail, "width": width, "height": height}}
    ]}))
}

fn count_with_rule(encoding: Encoding, rule: ImageRule, request: &Value) -> usize {
    let messages: Vec<Message> = request["messages"].as_array().unwrap().iter().map(to_message).collect();
    count_request_with(&Profile::openai(encoding, rule), &messages, &[], &ToolChoice::Auto).total
}

#[test]
fn pamelafox_images() {
    // tests/messages.py text_and_image_message (gpt-4 and gpt-4o): 1x1 PNG, detail auto -> 266.
    // tests/image_messages.py: the same -> 266 (gpt-4o) / 8511 (gpt-4o-mini); detail low -> 96 / 2844;
    // a 1126 x 488 PNG (its IHDR header) with "hi", detail auto -> 603 / 19842.
    let tiny_auto = image_message("Describe this picture:", "auto", 1, 1);
    let tiny_low = image_message("Describe this picture:", "low", 1, 1);
    let large = image_message("hi", "auto", 1126, 488);
    for enc in [CL, O2] {
        assert_eq!(count_with_rule(enc, ImageRule::GPT_4O, &tiny_auto), 266, "{enc:?}");
    }
    assert_eq!(count_with_rule(O2, ImageRule::GPT_4O, &tiny_low), 96);
    assert_eq!(count_with_rule(O2, ImageRule::GPT_4O, &large), 603);
    assert_eq!(count_with_rule(O2, ImageRule::GPT_4O_MINI, &tiny_auto), 8511);
    assert_eq!(count_with_rule(O2, ImageRule::GPT_4O_MINI, &tiny_low), 2844);
    assert_eq!(count_with_rule(O2, ImageRule::GPT_4O_MINI, &large), 19842);
}

// ---------------------------------------------------------------------------------------------
// pamelafox/openai-messages-token-helper, tests/functions.py: system "You are a bot." + tools +
// tool_choice, checked against the API by tests/verify_functions.py. The comments there note
// where the library's own estimate was over ("counted 67, over by 2"); the figures are the API's.

fn pamelafox_tool_case(tools: Value, tool_choice: Value) -> Value {
    json!({
        "messages": [{"role": "system", "content": "You are a bot."}],
        "tools": tools,
        "tool_choice": tool_choice
    })
}

fn pamelafox_function_cases() -> Vec<(&'static str, Value, usize, i64)> {
    let search_sources = json!([{"type": "function", "function": {
        "name": "search_sources",
        "description": "Retrieve sources from the Azure AI Search index",
        "parameters": {"type": "object", "properties": {"search_query": {
            "type": "string",
            "description": "Query string to retrieve documents from azure search eg: 'Health care plan'"
        }}, "required": ["search_query"]}
    }}]);
    let integer_enum = json!([{"type": "function", "function": {
        "name": "data_demonstration", "description": "This is the main function description",
        "parameters": {"type": "object", "properties": {"integer_enum": {"type": "integer", "enum": [-1, 1]}}}
    }}]);
    let no_parameters = json!([{"type": "function", "function": {
        "name": "search_sources", "description": "Retrieve sources from the Azure AI Search index"
    }}]);
    let object_1 = |props: Value| {
        json!([{"type": "function", "function": {
            "name": "data_demonstration", "description": "This is the main function description",
            "parameters": {"type": "object", "properties": props, "required": ["object_1"]}
        }}])
    };
    vec![
        ("search_sources_toolchoice_auto", pamelafox_tool_case(search_sources.clone(), json!("auto")), 66, 0),
        ("search_sources_toolchoice_none", pamelafox_tool_case(search_sources.clone(), json!("none")), 67, 0),
        (
            "search_sources_toolchoice_name",
            pamelafox_tool_case(search_sources, json!({"type": "function", "function": {"name": "search_sources"}})),
            75,
            0,
        ),
        ("integer_enum", pamelafox_tool_case(integer_enum.clone(), json!("none")), 54, 1),
        (
            "integer_enum_tool_choice_name",
            pamelafox_tool_case(integer_enum, json!({"type": "function", "function": {"name": "data_demonstration"}})),
            64,
            1,
        ),
        ("no_parameters", pamelafox_tool_case(no_parameters.clone(), json!("auto")), 42, 0),
        (
            "no_parameters_tool_choice_name",
            pamelafox_tool_case(no_parameters, json!({"type": "function", "function": {"name": "search_sources"}})),
            51,
            0,
        ),
        (
            "no_parameter_description_or_required",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "search_sources", "description": "Retrieve sources from the Azure AI Search index",
                    "parameters": {"type": "object", "properties": {"search_query": {"type": "string"}}}
                }}]),
                json!("auto"),
            ),
            49,
            1,
        ),
        (
            "no_parameter_description",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "search_sources", "description": "Retrieve sources from the Azure AI Search index",
                    "parameters": {"type": "object", "properties": {"search_query": {"type": "string"}}, "required": ["search_query"]}
                }}]),
                json!("auto"),
            ),
            49,
            1,
        ),
        (
            "string_enum",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "summarize_order", "description": "Summarize the customer order request",
                    "parameters": {"type": "object", "properties": {
                        "product_name": {"type": "string", "description": "Product name ordered by customer"},
                        "quantity": {"type": "integer", "description": "Quantity ordered by customer"},
                        "unit": {"type": "string", "enum": ["meals", "days"], "description": "unit of measurement of the customer order"}
                    }, "required": ["product_name", "quantity", "unit"]}
                }}]),
                json!("none"),
            ),
            86,
            0,
        ),
        (
            "inner_object",
            pamelafox_tool_case(
                object_1(json!({"object_1": {
                    "type": "object", "description": "The object data type as a property",
                    "properties": {"string1": {"type": "string"}}
                }})),
                json!("none"),
            ),
            65,
            2,
        ),
        (
            "inner_object_with_enum_only",
            pamelafox_tool_case(
                object_1(json!({"object_1": {
                    "type": "object", "description": "The object data type as a property",
                    "properties": {"string_2a": {"type": "string", "enum": ["Happy", "Sad"]}}
                }})),
                json!("none"),
            ),
            73,
            1,
        ),
        (
            "inner_object_with_enum",
            pamelafox_tool_case(
                object_1(json!({"object_1": {
                    "type": "object", "description": "The object data type as a property",
                    "properties": {
                        "string_2a": {"type": "string", "enum": ["Happy", "Sad"]},
                        "string_2b": {"type": "string", "description": "Description in a second object is lost"}
                    }
                }})),
                json!("none"),
            ),
            89,
            3,
        ),
        (
            "inner_object_and_string",
            pamelafox_tool_case(
                object_1(json!({
                    "object_1": {
                        "type": "object", "description": "The object data type as a property",
                        "properties": {
                            "string_2a": {"type": "string", "enum": ["Happy", "Sad"]},
                            "string_2b": {"type": "string", "description": "Description in a second object is lost"}
                        }
                    },
                    "string_1": {"type": "string", "description": "Not required gets a question mark"}
                })),
                json!("none"),
            ),
            103,
            3,
        ),
        (
            "boolean",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "human_escalation", "description": "Check if user wants to escalate to a human",
                    "parameters": {"type": "object", "properties": {"requires_escalation": {
                        "type": "boolean",
                        "description": "If user is showing signs of frustration or anger in the query. Also if the user says they want to talk to a real person and not a chat bot."
                    }}, "required": ["requires_escalation"]}
                }}]),
                json!("none"),
            ),
            89,
            0,
        ),
        (
            "array",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "get_coordinates", "description": "Get the latitude and longitude of multiple mailing addresses",
                    "parameters": {"type": "object", "properties": {"addresses": {
                        "type": "array", "description": "The mailing addresses to be located", "items": {"type": "string"}
                    }}, "required": ["addresses"]}
                }}]),
                json!("none"),
            ),
            59,
            0,
        ),
        (
            "null",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "get_null", "description": "Get the null value",
                    "parameters": {"type": "object", "properties": {"null_value": {"type": "null", "description": "The null value to be returned"}}, "required": ["null_value"]}
                }}]),
                json!("none"),
            ),
            55,
            0,
        ),
        (
            "no_type",
            pamelafox_tool_case(
                json!([{"type": "function", "function": {
                    "name": "get_no_type", "description": "Get the no type value",
                    "parameters": {"type": "object", "properties": {"no_type_value": {"description": "The no type value to be returned"}}, "required": ["no_type_value"]}
                }}]),
                json!("none"),
            ),
            59,
            0,
        ),
    ]
}

/// These figures are from a cl100k_base model (with o200k_base most cases come out 1-4 tokens
/// low, with cl100k_base none does). Ten are matched exactly. The other eight are over-counted
/// by 1-3 tokens — the same figures pamelafox's own implementation produces for them ("counted
/// 92, over by 3", ...) — and the gap is asserted so any change shows:
/// - a property without a description costs one token less in these figures than in the
///   rendering that matches the 2023 figures (integer_enum, no_parameter_description*);
/// - properties of nested objects cost about one token less per line (their two-space
///   indentation may not be rendered), and their descriptions are counted (the 2023 figures
///   drop them; `nested_descriptions: true` keeps them, erring high).
///
/// No rendering was found that matches both this set and the 2023 set exactly.
#[test]
fn pamelafox_functions() {
    let mut failures = Vec::new();
    for (name, request, api, gap) in pamelafox_function_cases() {
        let got = count(CL, Era::Current, &request) as i64;
        if got - api as i64 != gap {
            failures.push(format!("{name}: API {api}, counted {got}, documented gap {gap:+}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same 2023 figures with the default profile (`nested_descriptions: true`): everything
/// matches except the two cases with descriptions on nested properties, which the 2023 models
/// did not render — over-counted by the length of those descriptions.
#[test]
fn hmarr_cases_with_default_profile() {
    for (i, (request, expected)) in hmarr_cases().into_iter().enumerate() {
        let got = count(CL, Era::Current, &request);
        let gap = match i {
            34 => 13, // "Write 3 points why this text is well written" (nested)
            35 => 20, // description5..description8 (nested)
            _ => 0,
        };
        assert_eq!(got, expected + gap, "hmarr case #{i}");
    }
}

// ---------------------------------------------------------------------------------------------
// pypi totokenizers 1.4.0, tests/test_openai.py (gpt-4o-2024-05-13): three messages with names
// -> 34. Computed by that library with the cookbook formula (its function-call counting is a
// TODO); a consistency figure, not API-verified.

#[test]
fn totokenizers_gpt4o_named_messages() {
    check(
        Era::Current,
        &[Case {
            source: "totokenizers 1.4.0 (PyPI) tests/test_openai.py",
            encoding: O2,
            request: msgs(json!([
                {"role": "system", "name": "system", "content": "You are a bot."},
                {"role": "user", "name": "user", "content": "hello bot"},
                {"role": "assistant", "name": "skynet", "content": "I am Skynet."}
            ])),
            expected: 34,
        }],
    );
}
