//! `gemma3` ids equal Google's own tokenizer's on the whole reference corpus.
//!
//! `tests/gemini/reference.json` was written by `scripts/gemini-reference.sh` from the Python
//! `sentencepiece` package on the pinned model and from google-genai's `LocalTokenizer` (which
//! agreed on every input before the file was written). It holds, per text of
//! `tests/gemini/corpus.json` and per generated input (regenerated here with the same SplitMix64),
//! the token count and a 64-bit FNV-1a hash of the id sequence, and the ids themselves for short
//! texts. Committed, so that `cargo test` checks it without Python.
#![cfg(feature = "gemini")]

use std::path::PathBuf;

use ctxguard::tokens::{self, Encoding, Tokenizer};
use serde_json::Value;

fn json(name: &str) -> Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/gemini").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn gemma() -> &'static Tokenizer {
    tokens::tokenizer(Encoding::Gemma3).unwrap()
}

fn fnv(ids: impl IntoIterator<Item = u32>) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for id in ids {
        for b in id.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    format!("{h:016x}")
}

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The texts of a generated input (see `generate` in scripts/gemini-reference.py).
fn generate(recipe: &Value) -> Vec<String> {
    let alphabet: Vec<&str> = recipe
        .get("alphabet")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
        .unwrap_or_default();
    let mut rng = SplitMix(recipe.get("seed").and_then(Value::as_u64).unwrap_or(0));
    let n = |k: &str| recipe[k].as_u64().unwrap() as usize;
    match recipe["kind"].as_str().unwrap() {
        "repeat" => vec![recipe["unit"].as_str().unwrap().repeat(n("times"))],
        "random" => vec![(0..n("count")).map(|_| alphabet[rng.below(alphabet.len())]).collect()],
        "fuzz" => (0..n("n"))
            .map(|_| {
                let k = 1 + rng.below(n("max"));
                (0..k).map(|_| alphabet[rng.below(alphabet.len())]).collect()
            })
            .collect(),
        other => panic!("recipe {other}"),
    }
}

fn check(name: &str, texts: &[String], expected: &Value) {
    let t = gemma();
    let ids: Vec<Vec<u32>> = texts.iter().map(|s| t.encode(s)).collect();
    for (s, i) in texts.iter().zip(&ids) {
        assert_eq!(t.count(s), i.len(), "{name}: count and encode disagree");
    }
    if let Some(want) = expected.get("ids") {
        let want: Vec<u32> = serde_json::from_value(want.clone()).unwrap();
        assert_eq!(ids[0], want, "{name}: {:?}", texts[0]);
    }
    if let Some(count) = expected.get("count") {
        assert_eq!(ids[0].len() as u64, count.as_u64().unwrap(), "{name}: count");
        assert_eq!(fnv(ids[0].iter().copied()), expected["fnv"].as_str().unwrap(), "{name}: ids differ");
    } else {
        let counts: Vec<usize> = serde_json::from_value(expected["counts"].clone()).unwrap();
        for (k, (i, want)) in ids.iter().zip(&counts).enumerate() {
            assert_eq!(i.len(), *want, "{name}[{k}]: {:?}", texts[k]);
        }
        let all = ids.iter().flat_map(|i| i.iter().copied().chain([u32::MAX]));
        assert_eq!(fnv(all), expected["fnv"].as_str().unwrap(), "{name}: ids differ");
    }
}

#[test]
fn reference_is_for_the_pinned_model() {
    let r = json("reference.json");
    assert_eq!(r["model_sha256"], "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c");
}

#[test]
fn corpus_ids_equal_sentencepiece() {
    let corpus = json("corpus.json");
    let reference = json("reference.json");
    let expected = reference["corpus"].as_array().unwrap();
    let items = corpus.as_array().unwrap();
    assert_eq!(items.len(), expected.len());
    assert!(items.len() > 400);
    for (item, want) in items.iter().zip(expected) {
        let name = item["name"].as_str().unwrap();
        assert_eq!(want["name"], name);
        check(name, &[item["text"].as_str().unwrap().to_string()], want);
    }
}

#[test]
fn generated_inputs_ids_equal_sentencepiece() {
    let reference = json("reference.json");
    let generated = reference["generated"].as_array().unwrap();
    assert!(generated.len() >= 13);
    for want in generated {
        let name = want["name"].as_str().unwrap();
        check(name, &generate(&want["recipe"]), want);
    }
}

#[test]
fn offsets_cover_the_text_and_decode_back() {
    let t = gemma();
    let corpus = json("corpus.json");
    for item in corpus.as_array().unwrap() {
        let text = item["text"].as_str().unwrap();
        let mut end = 0usize;
        let mut ids = Vec::new();
        t.for_each_token(text, |id, s, e| {
            assert_eq!(s, end, "{}: tokens are contiguous", item["name"]);
            assert!(e > s);
            end = e;
            ids.push(id);
        });
        assert_eq!(end, text.len());
        // Decoding gives the text back, U+2581 as a space (as Google's SDKs show tokens).
        assert_eq!(t.decode(&ids), text.replace('\u{2581}', " "), "{}", item["name"]);
    }
}

// ---- Whole requests: ctxguard's message model against google-genai's `count_tokens`.

mod requests {
    use ctxguard::count::{count_request, CountKind};
    use ctxguard::message::{Content, Message, Part, Role, ToolCall, ToolDef};
    use ctxguard::provider::models;
    use serde_json::{json, Value};

    fn weather_args() -> Value {
        json!({"city": "Paris", "days": 3, "units": ["c", "f"], "opts": {"detail": true, "lang": "fr"}, "note": null})
    }

    fn weather_response() -> Value {
        json!({"temp": 21.5, "summary": "Sunny and warm", "hourly": [{"t": "09:00", "sky": "clear"}]})
    }

    fn weather_tool() -> ToolDef {
        serde_json::from_value(json!({
            "name": "get_weather",
            "description": "Gets the weather for a city",
            "parameters": {
                "type": "OBJECT",
                "title": "Weather query",
                "properties": {
                    "city": {"type": "STRING", "description": "City name", "example": "Paris"},
                    "units": {"type": "STRING", "enum": ["celsius", "fahrenheit"], "format": "enum"},
                    "days": {"type": "INTEGER", "default": 1},
                    "tags": {"type": "ARRAY", "items": {"type": "STRING", "description": "A tag"}},
                },
                "required": ["city"],
            },
        }))
        .unwrap()
    }

    fn call() -> Message {
        Message {
            role: Role::Assistant,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "get_weather".into(),
                arguments: weather_args().to_string().into(),
                extra: Default::default(),
            }],
            ..Message::text(Role::Assistant, "")
        }
    }

    fn response() -> Message {
        Message {
            tool_call_id: Some("c1".into()),
            name: Some("get_weather".into()),
            ..Message::text(Role::Tool, weather_response().to_string())
        }
    }

    fn user(text: &str) -> Message {
        Message::text(Role::User, text)
    }

    const SYSTEM: &str = "You are terse. Answer in French.";

    /// The same requests as `REQUESTS` in scripts/gemini-reference.py.
    fn cases() -> Vec<(&'static str, Vec<Message>, Vec<ToolDef>)> {
        let two_parts = Message {
            content: Content::Parts(vec![
                Part::Text { text: "First part.".into(), extra: Default::default() },
                Part::Text { text: " Second part\n".into(), extra: Default::default() },
            ]),
            ..user("")
        };
        let mut model_turn = call();
        model_turn.content = Content::Text("Let me check.".into());
        vec![
            ("user-text", vec![user("What's the weather in Paris?")], vec![]),
            ("two-parts", vec![two_parts], vec![]),
            ("system", vec![Message::text(Role::System, SYSTEM), user("Hi")], vec![]),
            ("function-call", vec![call()], vec![]),
            ("function-response", vec![response()], vec![]),
            ("tools", vec![user("Weather?")], vec![weather_tool()]),
            (
                "conversation",
                vec![
                    Message::text(Role::System, SYSTEM),
                    user("What's the weather in Paris?"),
                    model_turn,
                    response(),
                    Message::text(Role::Assistant, "It is sunny, 21.5 °C."),
                ],
                vec![weather_tool()],
            ),
        ]
    }

    #[test]
    fn request_totals_equal_local_tokenizer() {
        let reference = super::json("reference.json");
        let expected = reference["requests"].as_array().unwrap();
        let profile = models::profile(&models::info("gemini-2.5-pro"));
        assert_eq!(profile.accuracy, CountKind::Exact);
        let cases = cases();
        assert_eq!(cases.len(), expected.len());
        for ((name, messages, tools), want) in cases.iter().zip(expected) {
            assert_eq!(want["name"], *name);
            let got = count_request(&profile, messages, tools);
            assert_eq!(got.total as u64, want["total"].as_u64().unwrap(), "{name}: {got:?}");
            assert_eq!(got.accuracy, CountKind::Exact, "{name}");
        }
    }
}
