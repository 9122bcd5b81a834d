//! Pixel size of an inline image read from its header, without decoding the whole base64 payload.
//!
//! Image token costs depend on the pixel size (OpenAI tiles, Anthropic pixels). Inline images
//! arrive as base64 (`data:image/png;base64,...` URLs in OpenAI, `source.data` in Anthropic) that
//! can be megabytes long; decoding all of it just to read the size would waste time and memory.
//! Base64 is positional (every 4 characters encode 3 bytes), so this module decodes only the
//! 4-character groups that cover the header bytes it reads. For JPEG it walks the segment list,
//! jumping over segment bodies (EXIF, ICC profiles...) without decoding them.
//!
//! Supported: PNG, JPEG (baseline and progressive SOF markers), GIF, WebP (`VP8 `, `VP8L`,
//! `VP8X`). The format is sniffed from the magic bytes, not trusted from the media type.
//! Anything else, truncated or malformed input, or base64 interrupted by whitespace /
//! percent-escapes before the bytes read gives `None`. EXIF orientation is not applied: the size
//! is the stored pixel size.

/// Media types whose data URLs are inspected.
const IMAGE_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"];

/// Most JPEG segments walked before giving up (real files have a handful before SOF).
const MAX_JPEG_SEGMENTS: usize = 512;

/// `(width, height)` of a `data:image/{png,jpeg,gif,webp}[;...];base64,...` URL, read from the
/// image header. `None` for other URLs, other media types, non-base64 data URLs, or when the
/// header cannot be read.
pub fn image_size_from_data_url(url: &str) -> Option<(u32, u32)> {
    let rest = strip_prefix_ignore_case(url, "data:")?;
    let comma = rest.find(',')?;
    let header = rest.get(..comma)?;
    let data = rest.get(comma + 1..)?;
    let mut params = header.split(';');
    let media_type = params.next()?.trim();
    if !IMAGE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(media_type)) {
        return None;
    }
    if !params.any(|p| p.trim().eq_ignore_ascii_case("base64")) {
        return None;
    }
    image_size_from_base64(data)
}

/// `(width, height)` of a base64-encoded PNG, JPEG, GIF or WebP (standard or URL-safe alphabet,
/// padding optional), sniffed from the magic bytes.
pub fn image_size_from_base64(data: &str) -> Option<(u32, u32)> {
    read_size(data).0
}

/// How many characters at the start of `data` [`image_size_from_base64`] reads (decodes, or
/// checks are base64): the quads covering the header bytes, never the rest of the payload. A
/// work counter for tests; not a stable API.
#[doc(hidden)]
pub fn base64_chars_read(data: &str) -> usize {
    read_size(data).1
}

/// The size, and the end of the furthest quad read.
fn read_size(data: &str) -> (Option<(u32, u32)>, usize) {
    let reader = B64 { s: data.as_bytes(), max_end: std::cell::Cell::new(0) };
    let size = sniff(&reader)
        // Every quad decoded must sit at the position a clean base64 string gives it: whitespace
        // or escapes before it would shift the bytes we read.
        .filter(|_| reader.prefix_is_clean())
        .filter(|&(w, h)| w != 0 && h != 0);
    (size, reader.max_end.get())
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        s.get(prefix.len()..)
    } else {
        None
    }
}

fn sniff(r: &B64<'_>) -> Option<(u32, u32)> {
    let magic = r.bytes::<4>(0)?;
    match magic {
        [0x89, b'P', b'N', b'G'] => png(r),
        [0xFF, 0xD8, 0xFF, _] => jpeg(r),
        [b'G', b'I', b'F', b'8'] => gif(r),
        [b'R', b'I', b'F', b'F'] => webp(r),
        _ => None,
    }
}

fn png(r: &B64<'_>) -> Option<(u32, u32)> {
    if r.bytes::<4>(4)? != [0x0D, 0x0A, 0x1A, 0x0A] || &r.bytes::<4>(12)? != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(r.bytes::<4>(16)?);
    let h = u32::from_be_bytes(r.bytes::<4>(20)?);
    Some((w, h))
}

fn gif(r: &B64<'_>) -> Option<(u32, u32)> {
    let version = r.bytes::<2>(4)?;
    if &version != b"7a" && &version != b"9a" {
        return None;
    }
    let w = u16::from_le_bytes(r.bytes::<2>(6)?);
    let h = u16::from_le_bytes(r.bytes::<2>(8)?);
    Some((u32::from(w), u32::from(h)))
}

fn webp(r: &B64<'_>) -> Option<(u32, u32)> {
    if &r.bytes::<4>(8)? != b"WEBP" {
        return None;
    }
    match &r.bytes::<4>(12)? {
        b"VP8 " => {
            // Frame tag (3 bytes) at 20, start code at 23, then 14-bit width and height.
            if r.bytes::<3>(23)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            let w = u16::from_le_bytes(r.bytes::<2>(26)?) & 0x3FFF;
            let h = u16::from_le_bytes(r.bytes::<2>(28)?) & 0x3FFF;
            Some((u32::from(w), u32::from(h)))
        }
        b"VP8L" => {
            if r.bytes::<1>(20)? != [0x2F] {
                return None;
            }
            let bits = u32::from_le_bytes(r.bytes::<4>(21)?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => {
            let [w0, w1, w2] = r.bytes::<3>(24)?;
            let [h0, h1, h2] = r.bytes::<3>(27)?;
            let w = u32::from_le_bytes([w0, w1, w2, 0]) + 1;
            let h = u32::from_le_bytes([h0, h1, h2, 0]) + 1;
            Some((w, h))
        }
        _ => None,
    }
}

fn jpeg(r: &B64<'_>) -> Option<(u32, u32)> {
    let mut pos: usize = 2;
    for _ in 0..MAX_JPEG_SEGMENTS {
        if r.bytes::<1>(pos)? != [0xFF] {
            return None;
        }
        // Fill bytes: any number of 0xFF before the marker code.
        let [mut marker] = r.bytes::<1>(pos + 1)?;
        while marker == 0xFF {
            pos += 1;
            [marker] = r.bytes::<1>(pos + 1)?;
        }
        match marker {
            // Markers without a length field.
            0x01 | 0xD0..=0xD8 => {
                pos += 2;
                continue;
            }
            // End of image or start of scan before any frame header: no size to find.
            0xD9 | 0xDA => return None,
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes(r.bytes::<2>(pos + 2)?));
        if len < 2 {
            return None;
        }
        let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            // Length (2), precision (1), height (2), width (2).
            let h = u16::from_be_bytes(r.bytes::<2>(pos + 5)?);
            let w = u16::from_be_bytes(r.bytes::<2>(pos + 7)?);
            return Some((u32::from(w), u32::from(h)));
        }
        pos = pos.checked_add(2 + len)?;
    }
    None
}

/// Random access to the bytes of a base64 string, decoding only the quads touched.
struct B64<'a> {
    s: &'a [u8],
    /// End (exclusive) of the furthest quad decoded, for the cleanliness check.
    max_end: std::cell::Cell<usize>,
}

impl B64<'_> {
    fn bytes<const N: usize>(&self, offset: usize) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = self.byte(offset.checked_add(k)?)?;
        }
        Some(out)
    }

    fn byte(&self, offset: usize) -> Option<u8> {
        let quad_start = (offset / 3).checked_mul(4)?;
        let end = quad_start.checked_add(4)?.min(self.s.len());
        let quad = self.s.get(quad_start..end)?;
        if end > self.max_end.get() {
            self.max_end.set(end);
        }
        let v = |k: usize| quad.get(k).copied().and_then(sextet);
        match offset % 3 {
            0 => Some((v(0)? << 2) | (v(1)? >> 4)),
            1 => Some(((v(1)? & 0x0F) << 4) | (v(2)? >> 2)),
            _ => Some(((v(2)? & 0x03) << 6) | v(3)?),
        }
    }

    /// No character before the furthest quad read is outside the base64 alphabet.
    fn prefix_is_clean(&self) -> bool {
        self.s.get(..self.max_end.get()).is_some_and(|p| p.iter().all(|&c| sextet(c).is_some() || c == b'='))
    }
}

/// Value of one base64 character (standard or URL-safe alphabet); `None` for padding and others.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}
