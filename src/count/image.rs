//! Image tokens by the providers' published formulas. A base64 payload is never tokenized as
//! text: only the pixel size (when known) and the `detail` setting matter.
//!
//! Sources:
//! - OpenAI, "Images and vision" guide, section "Calculating costs"
//!   (platform.openai.com/docs/guides/images-vision#calculating-costs):
//!   tile models: `detail: low` costs the base tokens; `high`/`auto` scale the image to fit a
//!   2048 x 2048 square, then so that the shortest side is 768 px, and add the per-tile tokens for
//!   every 512 px tile (worked examples: 1024 x 1024 high = 765, 2048 x 4096 high = 1105 on
//!   gpt-4o). Patch models: 32 px patches, capped at 1536 patches (image scaled down to fit), then
//!   multiplied by a per-model factor (example: 1800 x 2400 -> 1452 patches).
//! - Anthropic, "Vision" guide: `tokens = width * height / 750` after the image is scaled down so
//!   its long edge is at most 1568 px and it is at most "about 1,600 tokens" (examples: 200 x 200
//!   ~54, 1000 x 1000 ~1334, 1092 x 1092 ~1590; the largest size of the "not resized" table,
//!   784 x 1568, is 1639 tokens, so the cap used here is 1640).
//! - Gemini, "Image understanding" / token docs: an image with both sides <= 384 px is 258 tokens;
//!   larger images are cropped and scaled into 768 x 768 tiles of 258 tokens each (Gemini 2.x).
//!   Gemini 3, "Media resolution" docs: each image gets a budget by `media_resolution`, whatever
//!   its size: low 280, medium 560, high 1120 (the default for images), ultra high 2240.

use serde::{Deserialize, Serialize};

/// How one image is counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ImageRule {
    /// OpenAI tile models: `base` (+ `tile` per 512 px tile for high/auto detail).
    OpenaiTiles { base: u32, tile: u32 },
    /// OpenAI patch models: 32 px patches capped at 1536, times `multiplier` (rounded up).
    /// `detail` does not change the count.
    OpenaiPatches { multiplier: f64 },
    /// Anthropic: pixel area / 750 after resizing (long edge <= 1568 px, <= 1640 tokens).
    AnthropicPixels,
    /// Gemini: 258 tokens for images up to 384 x 384, else 258 per 768 x 768 tile.
    GeminiTiles,
    /// Gemini 3: a budget per image whatever its size, by `media_resolution` (`detail` or the
    /// part's `mediaResolution`): low 280, medium 560, high 1120 (the default), ultra high 2240.
    GeminiResolution,
    /// A flat cost per image whatever its size.
    Flat { tokens: u32 },
}

/// OpenAI tile size in pixels.
const TILE_PX: f64 = 512.0;
/// OpenAI: first fit within this square.
const FIT_PX: f64 = 2048.0;
/// OpenAI: then shortest side at most this.
const SHORT_SIDE_PX: f64 = 768.0;
/// OpenAI patch models: patch size and patch budget.
const PATCH_PX: f64 = 32.0;
const PATCH_CAP: u64 = 1536;
/// Anthropic resize limits.
const ANTHROPIC_LONG_EDGE_PX: f64 = 1568.0;
const ANTHROPIC_PIXELS_PER_TOKEN: f64 = 750.0;
const ANTHROPIC_MAX_TOKENS: u64 = 1640;
/// Gemini.
const GEMINI_TOKENS_PER_TILE: u64 = 258;
const GEMINI_SMALL_PX: u32 = 384;
const GEMINI_TILE_PX: f64 = 768.0;
/// Gemini has no published upper bound; an image of unknown size is charged four tiles
/// (a 1536 x 1536 image).
const GEMINI_UNKNOWN_TILES: u64 = 4;

impl ImageRule {
    /// gpt-4o, gpt-4.1, gpt-4.5 (OpenAI vision docs table: 85 base, 170 per tile).
    pub const GPT_4O: ImageRule = ImageRule::OpenaiTiles { base: 85, tile: 170 };
    /// gpt-4o-mini (2833 base, 5667 per tile).
    pub const GPT_4O_MINI: ImageRule = ImageRule::OpenaiTiles { base: 2833, tile: 5667 };
    /// o1, o1-pro, o3 (75 base, 150 per tile).
    pub const O_SERIES: ImageRule = ImageRule::OpenaiTiles { base: 75, tile: 150 };
    /// gpt-5, gpt-5-chat-latest (70 base, 140 per tile).
    pub const GPT_5: ImageRule = ImageRule::OpenaiTiles { base: 70, tile: 140 };
    /// computer-use-preview (65 base, 129 per tile).
    pub const COMPUTER_USE: ImageRule = ImageRule::OpenaiTiles { base: 65, tile: 129 };
    /// gpt-4.1-mini and gpt-5-mini: patches x 1.62.
    pub const GPT_4_1_MINI: ImageRule = ImageRule::OpenaiPatches { multiplier: 1.62 };
    /// gpt-4.1-nano and gpt-5-nano: patches x 2.46.
    pub const GPT_4_1_NANO: ImageRule = ImageRule::OpenaiPatches { multiplier: 2.46 };
    /// o4-mini: patches x 1.72.
    pub const O4_MINI: ImageRule = ImageRule::OpenaiPatches { multiplier: 1.72 };

    /// Tokens for one image. `width`/`height` are `None` when the size is unknown (a remote URL
    /// the host did not measure): the rule's maximum is charged then, so the budget is never
    /// under-counted:
    /// - OpenAI tiles, high/auto: a 768 x 2048 image, 8 tiles (`base + 8 * tile`; 1445 on gpt-4o);
    /// - OpenAI patches: the 1536-patch cap times the multiplier;
    /// - Anthropic: 1640;
    /// - Gemini: four 258-token tiles (no published maximum).
    ///
    /// `detail` is OpenAI's `low` / `high` / `auto`; anything but `low` counts as high (that is
    /// what `auto` resolves to for any image larger than a tile, and it is the conservative side).
    pub fn tokens(&self, width: Option<u32>, height: Option<u32>, detail: Option<&str>) -> usize {
        let size = match (width, height) {
            (Some(w), Some(h)) if w > 0 && h > 0 => Some((w, h)),
            _ => None,
        };
        let low = matches!(detail, Some(d) if d.eq_ignore_ascii_case("low"));
        let n: u64 = match *self {
            ImageRule::OpenaiTiles { base, tile } => {
                if low {
                    u64::from(base)
                } else {
                    let tiles = match size {
                        Some((w, h)) => openai_tiles(w, h),
                        None => 8,
                    };
                    u64::from(base) + u64::from(tile) * tiles
                }
            }
            ImageRule::OpenaiPatches { multiplier } => {
                let patches = match size {
                    Some((w, h)) => openai_patches(w, h),
                    None => PATCH_CAP,
                };
                apply_multiplier(patches, multiplier)
            }
            ImageRule::AnthropicPixels => match size {
                Some((w, h)) => anthropic_tokens(w, h),
                None => ANTHROPIC_MAX_TOKENS,
            },
            ImageRule::GeminiTiles => match size {
                Some((w, h)) => gemini_tokens(w, h),
                None => GEMINI_UNKNOWN_TILES * GEMINI_TOKENS_PER_TILE,
            },
            ImageRule::GeminiResolution => gemini_resolution_tokens(detail),
            ImageRule::Flat { tokens } => u64::from(tokens),
        };
        usize::try_from(n).unwrap_or(usize::MAX)
    }
}

/// Number of 512 px tiles after OpenAI's two downscaling steps. Images are only ever scaled
/// down: a 1 x 1 image is one tile (API-verified: 255 tokens on gpt-4o), a 1126 x 488 image is
/// three (595 tokens).
pub fn openai_tiles(width: u32, height: u32) -> u64 {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let long = w.max(h);
    if long > FIT_PX {
        let s = FIT_PX / long;
        w = (w * s).floor();
        h = (h * s).floor();
    }
    let short = w.min(h);
    if short > SHORT_SIDE_PX {
        let s = SHORT_SIDE_PX / short;
        w = (w * s).floor();
        h = (h * s).floor();
    }
    let tiles_w = (w / TILE_PX).ceil().max(1.0);
    let tiles_h = (h / TILE_PX).ceil().max(1.0);
    (tiles_w * tiles_h) as u64
}

/// Number of 32 px patches for OpenAI's patch models, following the docs' algorithm: if the
/// image needs more than 1536 patches, shrink it by `sqrt(1536 * 32^2 / (w * h))`, then shrink
/// further so the side with the larger fractional overflow fits a whole number of patches;
/// count the patches covering the result, capped at 1536.
pub fn openai_patches(width: u32, height: u32) -> u64 {
    let (w, h) = (f64::from(width), f64::from(height));
    let raw = (w / PATCH_PX).ceil() * (h / PATCH_PX).ceil();
    if raw <= PATCH_CAP as f64 {
        return raw as u64;
    }
    let mut r = ((PATCH_CAP as f64) * PATCH_PX * PATCH_PX / (w * h)).sqrt();
    let pw = w * r / PATCH_PX;
    let ph = h * r / PATCH_PX;
    let fit_w = if pw > 0.0 { pw.floor() / pw } else { 1.0 };
    let fit_h = if ph > 0.0 { ph.floor() / ph } else { 1.0 };
    r *= fit_w.min(fit_h);
    let patches = ((w * r) / PATCH_PX).ceil().max(1.0) * ((h * r) / PATCH_PX).ceil().max(1.0);
    (patches as u64).min(PATCH_CAP)
}

fn apply_multiplier(n: u64, multiplier: f64) -> u64 {
    if !multiplier.is_finite() || multiplier <= 0.0 {
        return n;
    }
    // Round up: the docs do not say how fractions are billed; up is the safe side.
    // The tiny epsilon keeps exact products (1024 * 1.5) from rounding up through float noise.
    ((n as f64) * multiplier - 1e-9).ceil().max(0.0) as u64
}

/// Anthropic: scale so the long edge is at most 1568 px, tokens = area / 750 rounded up, capped
/// at 1640 (larger images are scaled down to about 1,600 tokens; 1640 covers every size of the
/// docs' "not resized" table).
pub fn anthropic_tokens(width: u32, height: u32) -> u64 {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let long = w.max(h);
    if long > ANTHROPIC_LONG_EDGE_PX {
        let s = ANTHROPIC_LONG_EDGE_PX / long;
        w *= s;
        h *= s;
    }
    let t = (w * h / ANTHROPIC_PIXELS_PER_TOKEN).ceil().max(1.0) as u64;
    t.min(ANTHROPIC_MAX_TOKENS)
}

/// Gemini 3's image budget for a `media_resolution` level (`low`, `medium`, `high`,
/// `ultra_high`, with or without the `MEDIA_RESOLUTION_` prefix, any case); high by default.
pub fn gemini_resolution_tokens(level: Option<&str>) -> u64 {
    let level = level.unwrap_or("").to_ascii_lowercase();
    match level.trim_start_matches("media_resolution_") {
        "low" => 280,
        "medium" => 560,
        "ultra_high" => 2240,
        _ => 1120,
    }
}

/// Gemini: 258 for small images, else 258 per 768 px tile.
pub fn gemini_tokens(width: u32, height: u32) -> u64 {
    if width <= GEMINI_SMALL_PX && height <= GEMINI_SMALL_PX {
        return GEMINI_TOKENS_PER_TILE;
    }
    let tiles =
        (f64::from(width) / GEMINI_TILE_PX).ceil().max(1.0) * (f64::from(height) / GEMINI_TILE_PX).ceil().max(1.0);
    (tiles as u64).saturating_mul(GEMINI_TOKENS_PER_TILE)
}
