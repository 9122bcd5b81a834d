//! Adapters between wire formats and the internal message model.

pub mod anthropic;
pub mod image_header;
pub mod openai;
mod wire;

pub use wire::{MARKERS_KEY, WIRE_INFO_KEY};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Openai,
    Anthropic,
}

impl Format {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "openai" => Ok(Format::Openai),
            "anthropic" => Ok(Format::Anthropic),
            other => Err(Error::new(
                ErrorCode::UnknownFormat,
                format!("unknown format {other:?}; expected \"openai\" or \"anthropic\""),
            )),
        }
    }
}
