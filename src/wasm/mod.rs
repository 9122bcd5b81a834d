//! The binding layer: the only place that names wasm-bindgen. Each export decodes its input,
//! calls the core, and encodes the output or maps the error, through the helpers in `convert` (and `json_input`).

// Without the `pipeline` feature only counting is exported (the `ctxguard/<encoding>/count`
// builds); with LTO the rest of the core then drops out of the .wasm.
#[cfg(feature = "pipeline")]
mod calibration;
#[cfg(feature = "pipeline")]
mod checkpoint;
mod convert;
mod count;
#[cfg(feature = "pipeline")]
mod guard;
#[cfg(feature = "pipeline")]
mod inspect;
#[cfg(feature = "pipeline")]
mod json_input;
#[cfg(feature = "pipeline")]
mod output;
#[cfg(feature = "pipeline")]
mod overflow;
#[cfg(feature = "pipeline")]
mod prepare;
#[cfg(feature = "pipeline")]
mod settle;
#[cfg(feature = "pipeline")]
mod sources;
#[cfg(feature = "pipeline")]
mod stored;
#[cfg(feature = "pipeline")]
mod summarizer;
mod vocab;

#[cfg(feature = "pipeline")]
pub use checkpoint::resolve_history;
pub use count::{count_tokens, known_models, model_info};
#[cfg(feature = "pipeline")]
pub use guard::{count_messages, ContextGuard};
#[cfg(feature = "pipeline")]
pub use inspect::{detect_format, list_attachments};
#[cfg(feature = "pipeline")]
pub use overflow::classify_provider_error;
#[cfg(feature = "pipeline")]
pub use sources::{compact_tool_output, preview_attachment, read_attachment, read_attachment_tool};
pub use vocab::{load_vocabulary_bytes, loaded_vocabulary, vocabulary_file};

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version (`version()` in JS).
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// `memoryStats()`: the module's linear memory in bytes. It grows and never shrinks, so over a
/// long session it is the high-water mark of what ctxguard ever held at once (soak benchmark).
#[wasm_bindgen(js_name = memoryStats)]
pub fn memory_stats() -> Result<JsValue, JsValue> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct MemoryStats {
        wasm_bytes: f64,
    }
    let pages = core::arch::wasm32::memory_size(0);
    convert::run(|| convert::encode(&MemoryStats { wasm_bytes: pages as f64 * 65536.0 }))
}
