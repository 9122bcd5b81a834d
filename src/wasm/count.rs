//! Exports for counting: `countTokens`, `modelInfo`, `knownModels`.

use wasm_bindgen::prelude::*;

use super::convert::{encode, run, string_options, text_arg};
use crate::provider::models;
use crate::tokens::{self, Encoding};

/// `countTokens(text, { encoding?, model? }) -> number`. With a model whose tokenizer is not
/// public (and no explicit encoding), the result is that model's estimate.
#[wasm_bindgen(js_name = countTokens)]
pub fn count_tokens(text: JsValue, opts: JsValue) -> Result<u32, JsValue> {
    run(|| {
        let text = text_arg(&text, "text")?;
        let [encoding, model] = string_options(&opts, "options", ["encoding", "model"])?;
        let (encoding, factor) = match (&encoding, &model) {
            (Some(e), _) => (Encoding::from_name(e)?, 1.0),
            (None, Some(m)) => {
                let info = models::info(m);
                (info.encoding, info.estimate_factor)
            }
            (None, None) => (Encoding::build_default(), 1.0),
        };
        let n = tokens::count(encoding.require()?, &text);
        Ok(crate::base::round::count_scale(n, factor))
    })
}

/// `modelInfo(model) -> ModelInfo`.
#[wasm_bindgen(js_name = modelInfo)]
pub fn model_info(model: JsValue) -> Result<JsValue, JsValue> {
    run(|| encode(&models::info(&text_arg(&model, "model")?)))
}

/// `knownModels() -> ModelInfo[]`.
#[wasm_bindgen(js_name = knownModels)]
pub fn known_models() -> Result<JsValue, JsValue> {
    run(|| encode(&models::known_models()))
}
