//! Image sizes read from hand-built PNG / JPEG / GIF / WebP headers, base64 and data URLs.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE};
use base64::Engine;
use ctxguard::format::image_header::{base64_chars_read, image_size_from_base64, image_size_from_data_url};

fn png(w: u32, h: u32) -> Vec<u8> {
    let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    b.extend_from_slice(&13u32.to_be_bytes());
    b.extend_from_slice(b"IHDR");
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0]); // bit depth, RGBA, compression, filter, interlace
    b.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]); // CRC (not checked)
    b.extend_from_slice(&[0, 0, 0, 0]);
    b.extend_from_slice(b"IEND");
    b
}

fn segment(marker: u8, body: &[u8]) -> Vec<u8> {
    let mut s = vec![0xFF, marker];
    s.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
    s.extend_from_slice(body);
    s
}

/// SOI, APP0 JFIF, a large APP1 (EXIF-like) segment, DQT, then the frame header `sof`.
fn jpeg(w: u16, h: u16, sof: u8, exif_len: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8];
    b.extend(segment(0xE0, b"JFIF\0\x01\x01\x00\x00\x48\x00\x48\x00\x00"));
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend((0..exif_len).map(|k| (k % 251) as u8));
    b.extend(segment(0xE1, &exif));
    b.extend(segment(0xDB, &[0u8; 65]));
    // Fill bytes before the frame marker are legal.
    b.extend_from_slice(&[0xFF, 0xFF]);
    let mut frame = vec![8];
    frame.extend_from_slice(&h.to_be_bytes());
    frame.extend_from_slice(&w.to_be_bytes());
    frame.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    let seg = segment(sof, &frame);
    b.extend_from_slice(&seg[1..]); // the 0xFF fill above already starts the marker
    b.extend(segment(0xC4, &[0u8; 20]));
    b.extend_from_slice(&[0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0]);
    b.extend_from_slice(&[0x12, 0x34, 0xFF, 0xD9]);
    b
}

fn gif(w: u16, h: u16) -> Vec<u8> {
    let mut b = b"GIF89a".to_vec();
    b.extend_from_slice(&w.to_le_bytes());
    b.extend_from_slice(&h.to_le_bytes());
    b.extend_from_slice(&[0xF7, 0, 0, 0x3B]);
    b
}

fn riff(chunk: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut b = b"RIFF".to_vec();
    b.extend_from_slice(&((body.len() + 12) as u32).to_le_bytes());
    b.extend_from_slice(b"WEBP");
    b.extend_from_slice(chunk);
    b.extend_from_slice(&(body.len() as u32).to_le_bytes());
    b.extend_from_slice(body);
    b
}

fn webp_lossy(w: u16, h: u16) -> Vec<u8> {
    let mut body = vec![0x50, 0x2A, 0x00, 0x9D, 0x01, 0x2A];
    body.extend_from_slice(&w.to_le_bytes());
    body.extend_from_slice(&h.to_le_bytes());
    body.extend_from_slice(&[0u8; 16]);
    riff(b"VP8 ", &body)
}

fn webp_lossless(w: u32, h: u32) -> Vec<u8> {
    let bits = (w - 1) | ((h - 1) << 14) | (1 << 28);
    let mut body = vec![0x2F];
    body.extend_from_slice(&bits.to_le_bytes());
    body.extend_from_slice(&[0u8; 8]);
    riff(b"VP8L", &body)
}

fn webp_extended(w: u32, h: u32) -> Vec<u8> {
    let mut body = vec![0x10, 0, 0, 0];
    body.extend_from_slice(&(w - 1).to_le_bytes()[..3]);
    body.extend_from_slice(&(h - 1).to_le_bytes()[..3]);
    riff(b"VP8X", &body)
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", STANDARD.encode(bytes))
}

#[test]
fn png_sizes() {
    assert_eq!(image_size_from_data_url(&data_url("image/png", &png(1024, 768))), Some((1024, 768)));
    assert_eq!(image_size_from_base64(&STANDARD.encode(png(1, 70000))), Some((1, 70000)));
    // The classic 1x1 transparent PNG, as pasted in countless web pages.
    let one = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    assert_eq!(image_size_from_data_url(one), Some((1, 1)));
}

#[test]
fn jpeg_sizes_baseline_progressive_and_large_exif() {
    assert_eq!(image_size_from_data_url(&data_url("image/jpeg", &jpeg(640, 480, 0xC0, 10))), Some((640, 480)));
    assert_eq!(image_size_from_data_url(&data_url("image/jpg", &jpeg(3024, 4032, 0xC2, 100))), Some((3024, 4032)));
    // A 60 KB EXIF segment before the frame header is jumped over, not decoded.
    assert_eq!(image_size_from_base64(&STANDARD.encode(jpeg(4000, 3000, 0xC0, 60_000))), Some((4000, 3000)));
    // DHT (0xC4) is not a frame header even though it is in the 0xC0..0xCF range.
    let mut only_dht = vec![0xFF, 0xD8];
    only_dht.extend(segment(0xC4, &[0u8; 20]));
    only_dht.extend_from_slice(&[0xFF, 0xD9]);
    assert_eq!(image_size_from_base64(&STANDARD.encode(only_dht)), None);
}

#[test]
fn gif_and_webp_sizes() {
    assert_eq!(image_size_from_data_url(&data_url("image/gif", &gif(320, 200))), Some((320, 200)));
    assert_eq!(image_size_from_data_url(&data_url("image/webp", &webp_lossy(800, 600))), Some((800, 600)));
    assert_eq!(image_size_from_data_url(&data_url("image/webp", &webp_lossless(17, 9))), Some((17, 9)));
    assert_eq!(image_size_from_data_url(&data_url("image/webp", &webp_extended(5000, 16000))), Some((5000, 16000)));
}

#[test]
fn alphabet_padding_and_case_variants() {
    let bytes = png(300, 200);
    assert_eq!(image_size_from_base64(&URL_SAFE.encode(&bytes)), Some((300, 200)));
    assert_eq!(image_size_from_base64(&STANDARD_NO_PAD.encode(&bytes)), Some((300, 200)));
    let upper = format!("DATA:IMAGE/PNG;BASE64,{}", STANDARD.encode(&bytes));
    assert_eq!(image_size_from_data_url(&upper), Some((300, 200)));
    let with_name = format!("data:image/png;name=shot.png;base64,{}", STANDARD.encode(&bytes));
    assert_eq!(image_size_from_data_url(&with_name), Some((300, 200)));
    // The media type is not trusted: bytes are sniffed.
    assert_eq!(image_size_from_data_url(&data_url("image/png", &gif(7, 8))), Some((7, 8)));
}

#[test]
fn non_images_and_broken_data_give_none() {
    let bytes = png(300, 200);
    let b64 = STANDARD.encode(&bytes);
    assert_eq!(image_size_from_data_url("https://example.com/cat.png"), None);
    assert_eq!(image_size_from_data_url(&format!("data:image/svg+xml;base64,{b64}")), None);
    assert_eq!(image_size_from_data_url(&format!("data:text/plain;base64,{b64}")), None);
    assert_eq!(image_size_from_data_url("data:image/png,%89PNG"), None);
    assert_eq!(image_size_from_data_url("data:image/png;base64"), None);
    assert_eq!(image_size_from_data_url(""), None);
    // Truncated before the size.
    assert_eq!(image_size_from_base64(&STANDARD.encode(&bytes[..18])), None);
    // Line breaks before the header bytes shift the decoding: refused rather than misread.
    let broken = format!("{}\n{}", &b64[..8], &b64[8..]);
    assert_eq!(image_size_from_base64(&broken), None);
    // Garbage and non-ASCII text never panic.
    assert_eq!(image_size_from_base64("!!!!"), None);
    assert_eq!(image_size_from_base64("héllo wörld 🎉"), None);
    assert_eq!(image_size_from_data_url("data:image/png;base64,🎉🎉🎉🎉🎉🎉"), None);
    assert_eq!(image_size_from_base64(&STANDARD.encode(gif(0, 10))), None);
}

#[test]
fn huge_payload_is_cheap() {
    // 6 MB of base64 after a PNG header: only the 8 quads covering the 24 header bytes are read
    // (decoded, and checked to be base64), however long the payload.
    let mut bytes = png(1920, 1080);
    let header_only = STANDARD.encode(&bytes);
    bytes.resize(4_500_000, 0x55);
    let b64 = STANDARD.encode(&bytes);
    assert_eq!(image_size_from_base64(&b64), Some((1920, 1080)));
    assert_eq!(base64_chars_read(&b64), 32);
    assert_eq!(base64_chars_read(&header_only), 32);
    assert_eq!(image_size_from_data_url(&data_url("image/png", &bytes)), Some((1920, 1080)));
    // Were the rest decoded or checked, a payload that stops being base64 after the header
    // would be refused.
    let tail = format!("data:image/png;base64,{}{}", &b64[..32], "!%\n ".repeat(1_500_000));
    assert_eq!(image_size_from_data_url(&tail), Some((1920, 1080)));

    // A JPEG: the reader walks the segments up to the frame header, never the 4 MB after it.
    let small = jpeg(4000, 3000, 0xC0, 60_000);
    let mut large = small.clone();
    large.resize(4_500_000, 0x55);
    let (a, b) = (STANDARD.encode(&small), STANDARD.encode(&large));
    assert_eq!(image_size_from_base64(&b), Some((4000, 3000)));
    assert_eq!(base64_chars_read(&b), base64_chars_read(&a));
    assert!(base64_chars_read(&a) < a.len(), "{} of {}", base64_chars_read(&a), a.len());
}
