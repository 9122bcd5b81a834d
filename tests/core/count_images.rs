//! Image formulas against the providers' worked examples (hand-computed where the docs only give
//! the rule).

use ctxguard::count::image::{anthropic_tokens, gemini_tokens, openai_patches, openai_tiles};
use ctxguard::count::ImageRule;

fn high(rule: ImageRule, w: u32, h: u32) -> usize {
    rule.tokens(Some(w), Some(h), Some("high"))
}

// OpenAI "Images and vision" guide, "Calculating costs" — tile models.

#[test]
fn openai_tile_worked_examples() {
    // "A 1024 x 1024 square image in detail: high mode costs 765 tokens" (scaled to 768 x 768, 4 tiles).
    assert_eq!(high(ImageRule::GPT_4O, 1024, 1024), 765);
    // "A 2048 x 4096 image in detail: high mode costs 1105 tokens" (1024 x 2048 -> 768 x 1536, 6 tiles).
    assert_eq!(high(ImageRule::GPT_4O, 2048, 4096), 1105);
    // "A 4096 x 8192 image in detail: low most costs 85 tokens".
    assert_eq!(ImageRule::GPT_4O.tokens(Some(4096), Some(8192), Some("low")), 85);
    assert_eq!(ImageRule::GPT_4O.tokens(Some(4096), Some(8192), Some("LOW")), 85);
}

#[test]
fn openai_auto_and_missing_detail_count_as_high() {
    assert_eq!(ImageRule::GPT_4O.tokens(Some(1024), Some(1024), Some("auto")), 765);
    assert_eq!(ImageRule::GPT_4O.tokens(Some(1024), Some(1024), None), 765);
}

#[test]
fn openai_tiles_only_scale_down() {
    // API-verified (pamelafox/openai-messages-token-helper): a 1 x 1 PNG is one tile (255 on
    // gpt-4o), a 1126 x 488 PNG three (595).
    assert_eq!(openai_tiles(1, 1), 1);
    assert_eq!(high(ImageRule::GPT_4O, 1, 1), 255);
    assert_eq!(openai_tiles(1126, 488), 3);
    assert_eq!(high(ImageRule::GPT_4O, 1126, 488), 595);
    // Edges: 512 x 512 is one tile, 513 x 512 two; 768 x 2048 (the largest after scaling) eight.
    assert_eq!(openai_tiles(512, 512), 1);
    assert_eq!(openai_tiles(513, 512), 2);
    assert_eq!(openai_tiles(768, 2048), 8);
    // 4000 x 3000: fit 2048 -> 2048 x 1536, short side 768 -> 1024 x 768: 2 x 2 tiles.
    assert_eq!(openai_tiles(4000, 3000), 4);
    // Very long strip: 100 x 10000 -> 20 x 2048: 1 x 4 tiles.
    assert_eq!(openai_tiles(100, 10_000), 4);
}

#[test]
fn openai_tile_model_constants() {
    // 1024 x 1024 high = base + 4 tiles, per the docs' table.
    assert_eq!(high(ImageRule::GPT_4O_MINI, 1024, 1024), 2833 + 4 * 5667);
    assert_eq!(high(ImageRule::O_SERIES, 1024, 1024), 75 + 4 * 150);
    assert_eq!(high(ImageRule::GPT_5, 1024, 1024), 70 + 4 * 140);
    assert_eq!(high(ImageRule::COMPUTER_USE, 1024, 1024), 65 + 4 * 129);
    // gpt-4o-mini low / 1 x 1 auto: API-verified 2833 / 8500 (pamelafox, 2844 and 8511 with the text).
    assert_eq!(ImageRule::GPT_4O_MINI.tokens(Some(1), Some(1), Some("low")), 2833);
    assert_eq!(ImageRule::GPT_4O_MINI.tokens(Some(1), Some(1), Some("auto")), 8500);
}

#[test]
fn openai_unknown_size_is_the_maximum() {
    // Remote URL without a size: 8 tiles (768 x 2048), the most any image can cost.
    assert_eq!(ImageRule::GPT_4O.tokens(None, None, Some("high")), 85 + 8 * 170);
    assert_eq!(ImageRule::GPT_4O.tokens(None, None, None), 1445);
    assert_eq!(ImageRule::GPT_4O.tokens(Some(100), None, None), 1445);
    assert_eq!(ImageRule::GPT_4O.tokens(Some(0), Some(0), None), 1445);
    // low detail does not depend on size.
    assert_eq!(ImageRule::GPT_4O.tokens(None, None, Some("low")), 85);
    // No known size costs more than the unknown-size figure.
    for (w, h) in [(1, 1), (512, 512), (1024, 1024), (768, 2048), (2048, 2048), (9000, 1200), (3, 9000)] {
        assert!(high(ImageRule::GPT_4O, w, h) <= 1445, "{w}x{h}");
    }
}

// OpenAI patch models.

#[test]
fn openai_patch_worked_examples() {
    // "1024 x 1024 ... 32 * 32 = 1024, below the cap of 1536".
    assert_eq!(openai_patches(1024, 1024), 1024);
    // "1800 x 2400 ... 57 * 75 = 4275 patches ... shrink factor 0.603 ... 33 / 33.94 = 0.97 ...
    // 1452 image tokens".
    assert_eq!(openai_patches(1800, 2400), 1452);
    assert_eq!(openai_patches(2400, 1800), 1452);
    // Exactly at the cap: 2048 x 768 = 64 x 24 = 1536 patches, not resized.
    assert_eq!(openai_patches(2048, 768), 1536);
    // Partial patches count whole: 33 x 33 px = 2 x 2.
    assert_eq!(openai_patches(33, 33), 4);
    // Never above the cap, whatever the size.
    for (w, h) in [(4000, 4000), (10_000, 100), (100, 10_000), (4096, 2160), (1537 * 32, 32), (7, 99_999)] {
        let p = openai_patches(w, h);
        assert!(p <= 1536 && p > 0, "{w}x{h} -> {p}");
    }
}

#[test]
fn openai_patch_multipliers() {
    // Docs: gpt-4.1-mini multiplies image tokens by 1.62, gpt-4.1-nano by 2.46, o4-mini by 1.72.
    // Fractions are rounded up.
    assert_eq!(high(ImageRule::GPT_4_1_MINI, 1024, 1024), 1659); // 1658.88
    assert_eq!(high(ImageRule::GPT_4_1_NANO, 1024, 1024), 2520); // 2519.04
    assert_eq!(high(ImageRule::O4_MINI, 1024, 1024), 1762); // 1761.28
    assert_eq!(high(ImageRule::GPT_4_1_MINI, 1800, 2400), 2353); // 1452 * 1.62 = 2352.24
                                                                 // detail does not change patch models.
    assert_eq!(ImageRule::GPT_4_1_MINI.tokens(Some(1024), Some(1024), Some("low")), 1659);
    // Unknown size: the 1536-patch cap.
    assert_eq!(ImageRule::GPT_4_1_MINI.tokens(None, None, None), 2489); // 2488.32
    assert_eq!(ImageRule::OpenaiPatches { multiplier: 1.0 }.tokens(None, None, None), 1536);
    // An exact product is not pushed up by float noise.
    assert_eq!(ImageRule::OpenaiPatches { multiplier: 1.5 }.tokens(Some(1024), Some(1024), None), 1536);
}

// Anthropic "Vision" guide: tokens = (width px * height px) / 750.

#[test]
fn anthropic_worked_examples() {
    assert_eq!(anthropic_tokens(200, 200), 54); // "~54"
    assert_eq!(anthropic_tokens(1000, 1000), 1334); // "~1334"
    assert_eq!(anthropic_tokens(1092, 1092), 1590); // "~1590"
                                                    // The "not resized" maximum sizes per aspect ratio stay within the cap.
    assert_eq!(anthropic_tokens(951, 1268), 1608);
    assert_eq!(anthropic_tokens(896, 1344), 1606);
    assert_eq!(anthropic_tokens(819, 1456), 1590);
    assert_eq!(anthropic_tokens(784, 1568), 1640); // 1639.1
                                                   // Larger images are scaled down: never above the cap.
    assert_eq!(anthropic_tokens(3000, 2000), 1640);
    assert_eq!(anthropic_tokens(8000, 8000), 1640);
    // Long thin image: 4000 x 100 -> 1568 x 39.2 = 82 tokens.
    assert_eq!(anthropic_tokens(4000, 100), 82);
    // Tiny image: at least one token.
    assert_eq!(anthropic_tokens(1, 1), 1);
}

#[test]
fn anthropic_rule_ignores_detail_and_defaults_to_max() {
    let r = ImageRule::AnthropicPixels;
    assert_eq!(r.tokens(Some(1000), Some(1000), Some("low")), 1334);
    assert_eq!(r.tokens(None, None, None), 1640);
}

// Gemini: 258 tokens up to 384 x 384, else 258 per 768 x 768 tile.

#[test]
fn gemini_tiles() {
    assert_eq!(gemini_tokens(384, 384), 258);
    assert_eq!(gemini_tokens(100, 300), 258);
    assert_eq!(gemini_tokens(385, 10), 258);
    assert_eq!(gemini_tokens(1000, 1000), 4 * 258);
    assert_eq!(gemini_tokens(768, 768), 258);
    assert_eq!(ImageRule::GeminiTiles.tokens(None, None, None), 4 * 258);
}

#[test]
fn flat_rule() {
    assert_eq!(ImageRule::Flat { tokens: 500 }.tokens(Some(10), Some(10), None), 500);
    assert_eq!(ImageRule::Flat { tokens: 500 }.tokens(None, None, Some("low")), 500);
}
