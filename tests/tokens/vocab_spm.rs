//! Mistral's SentencePiece vocabularies v3 and v7 (docs/vocabularies.md; `src/tokens/spm_model.rs`,
//! `spm_file.rs`, `spm.rs`): the models fetched by scripts/fetch-vocabs.sh convert to ctxguard's
//! file, load, and encode every text of tests/tokens/mistral_reference.json to the ids the
//! `sentencepiece` package gives (scripts/mistral-reference.sh wrote it: the Gemini corpus, runs
//! of spaces, user-defined symbols, control-token text, emoji, RTL, controls, long runs).

use std::path::{Path, PathBuf};

use ctxguard::base::error::ErrorCode;
use ctxguard::tokens::{loaded, spm_file, spm_model, tokenizer, Encoding, Tokenizer};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn model_path(file: &str) -> PathBuf {
    root().join("target/vocab-src/mistral-spm").join(file)
}

/// The spec of the model in `file` under the name `name`.
fn spec_of(file: &str, name: &str) -> spm_file::Spec {
    let path = model_path(file);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/fetch-vocabs.sh fetches it; make setup runs it)", path.display()));
    spm_model::spec(&spm_model::read(&bytes).unwrap(), name, "test").unwrap()
}

/// The file ctxguard ships for `name`, converted here as examples/vocab converts it.
fn converted(name: &str, file: &str) -> Vec<u8> {
    spm_file::write(&spec_of(file, name)).unwrap()
}

const MODELS: [(&str, &str, Encoding); 2] = [
    ("mistral-spm-v3", "mistral_instruct_tokenizer_240323.model.v3", Encoding::MistralSpmV3),
    ("mistral-spm-v7", "mistral_instruct_tokenizer_241114.model.v7", Encoding::MistralSpmV7),
];

/// Both vocabularies, registered once for this test binary.
fn loaded_tokenizer(encoding: Encoding) -> &'static Tokenizer {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        for (name, file, encoding) in MODELS {
            let info = loaded::load_bytes(&converted(name, file), "test").unwrap();
            assert_eq!((info.name.as_str(), info.encoding, info.nfc), (name, encoding, false));
            assert_eq!(info.tokens, 31_741, "{name}: ordinary pieces");
            assert_eq!(info.added_tokens, if name.ends_with("v3") { 20 } else { 22 }, "{name}: user-defined symbols");
            assert!(info.matches_added_tokens);
        }
    });
    tokenizer(encoding).unwrap()
}

fn fnv(ids: &[u32]) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for id in ids {
        for b in id.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
    }
    format!("{h:016x}")
}

#[test]
fn the_models_are_what_the_engine_reproduces() {
    for (name, file, _) in MODELS {
        let model = spm_model::read(&std::fs::read(model_path(file)).unwrap()).unwrap();
        assert!(model.dummy_prefix, "{name}: mistral-common's models put a space in front");
        let spec = spm_model::spec(&model, name, "test").unwrap();
        assert_eq!(spec.count, 32_768, "{name}");
        // Runs of U+2581 (and U+2581 alone) share the lowest score: merged last, leftmost first.
        assert_eq!(spec.lowest.len(), 15, "{name}");
        let normal: std::collections::HashMap<u32, &Vec<u8>> = spec.normal.iter().map(|(id, b)| (*id, b)).collect();
        assert!(spec.lowest.iter().all(|id| normal[id].iter().all(|&b| b == b' ')), "{name}");
        let back = spm_file::decode(&spm_file::write(&spec).unwrap()).unwrap();
        assert_eq!((back.name.as_str(), back.dummy_prefix, &back.lowest), (name, true, &spec.lowest));
    }
}

#[test]
fn every_text_encodes_as_sentencepiece_does() {
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("tests/tokens/mistral_reference.json")).unwrap())
            .unwrap();
    let corpus: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("tests/gemini/corpus.json")).unwrap()).unwrap();
    let corpus_text = |name: &str| -> String {
        corpus.as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()["text"].as_str().unwrap().to_string()
    };
    for (name, _, encoding) in MODELS {
        let t = loaded_tokenizer(encoding);
        let cases = reference[name]["cases"].as_array().unwrap();
        assert!(cases.len() > 400, "{name}");
        let mut wrong = Vec::new();
        for c in cases {
            let case = c["name"].as_str().unwrap();
            let text = c["text"].as_str().map_or_else(|| corpus_text(case), str::to_string);
            let ids = t.encode(&text);
            let count = c["count"].as_u64().unwrap() as usize;
            if fnv(&ids) != c["fnv"].as_str().unwrap() || ids.len() != count {
                let want: Option<Vec<u32>> = c.get("ids").map(|v| serde_json::from_value(v.clone()).unwrap());
                wrong.push(format!("{case}: {} tokens, want {count}; {ids:?} want {want:?}", ids.len()));
                continue;
            }
            assert_eq!(t.count(&text), count, "{name} {case}: count");
            assert_eq!(t.count_till_limit(&text, count), Some(count), "{name} {case}");
            if count > 0 {
                assert_eq!(t.count_till_limit(&text, count - 1), None, "{name} {case}");
            }
        }
        assert!(wrong.is_empty(), "{name}: {} of {} differ:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    }
}

#[test]
fn offsets_cover_the_text_without_the_dummy_prefix() {
    let t = loaded_tokenizer(Encoding::MistralSpmV3);
    for text in ["Hello world", "  two spaces", "[REFERENCE_DOC_1] x", "東京 🙂"] {
        let mut spans = Vec::new();
        t.for_each_token(text, |_, s, e| spans.push((s, e)));
        assert_eq!(spans.first().map(|s| s.0), Some(0), "{text:?}");
        assert_eq!(spans.last().map(|s| s.1), Some(text.len()), "{text:?}");
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0 || w[0] == w[1]), "{text:?}: {spans:?}");
        let n = t.count(text);
        assert_eq!(t.head_offset(text, n), text.len());
        assert_eq!(t.tail_offset(text, n), 0);
    }
}

#[test]
fn damaged_files_and_unknown_names_are_refused() {
    let file = converted("mistral-spm-v3", MODELS[0].1);
    for cut in (0..120).chain([file.len() / 2, file.len() - 1]) {
        assert!(loaded::load_bytes(&file[..cut], "cut").is_err(), "cut at {cut}");
    }
    let err = loaded::load_bytes(&converted("not-a-vocabulary", MODELS[0].1), "test").unwrap_err();
    assert_eq!(err.code, ErrorCode::UnsupportedVocabulary);
    // A second load of the same file is a no-op; v7's bytes under v3's name conflict.
    loaded_tokenizer(Encoding::MistralSpmV3);
    assert!(!loaded::load_bytes(&file, "again").unwrap().loaded_now);
    let err = loaded::load_bytes(&converted("mistral-spm-v3", MODELS[1].1), "test").unwrap_err();
    assert_eq!(err.code, ErrorCode::VocabularyConflict);
}
