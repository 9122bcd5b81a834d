//! Exports for loadable vocabularies (docs/vocabularies.md): the JS entries fetch or read the
//! file and hand its bytes over; everything else happens in the core (`tokens::loaded`).

use wasm_bindgen::prelude::*;

use super::convert::{encode, run, text_arg};
use crate::base::error::Error;
use crate::tokens::loaded;

/// `vocabularyFile(nameOrModel) -> string`: the file (`llama3`, `qwen3`, `deepseek-v3`,
/// `mistral-tekken`, `mistral-spm-v3`, `mistral-spm-v7`) of a vocabulary name, alias or model id;
/// `UNKNOWN_VOCABULARY` otherwise.
#[wasm_bindgen(js_name = vocabularyFile)]
pub fn vocabulary_file(name: JsValue) -> Result<String, JsValue> {
    run(|| {
        let name = text_arg(&name, "name")?;
        match loaded::resolve_name(&name) {
            Ok(file) => Ok(file.to_string()),
            Err(e) => crate::provider::models::info(&name).vocabulary.map(str::to_string).ok_or(e),
        }
    })
}

/// `loadedVocabulary(file) -> LoadedInfo | null`: what is loaded for that file's encoding.
#[wasm_bindgen(js_name = loadedVocabulary)]
pub fn loaded_vocabulary(file: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let file = text_arg(&file, "name")?;
        let encoding = loaded::VOCABULARIES.iter().find(|(f, _, _)| *f == file).map(|(_, e, _)| *e);
        match encoding.and_then(loaded::info) {
            Some(info) => encode(&info),
            None => Ok(JsValue::NULL),
        }
    })
}

/// `loadVocabularyBytes(bytes, source) -> LoadedInfo`.
#[wasm_bindgen(js_name = loadVocabularyBytes)]
pub fn load_vocabulary_bytes(bytes: &[u8], source: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let source = source.as_string().unwrap_or_else(|| "bytes given to loadVocabulary".to_string());
        let info = loaded::load_bytes(bytes, &source).map_err(|e: Error| e)?;
        encode(&info)
    })
}
