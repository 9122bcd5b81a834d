// The conversation's attachments as the host keeps them (the raw view): full text by id, the
// `source` that readAttachment() pages through.
//
// Ids follow ctxguard's rule (src/guards/attachment.rs), so they match the ids its previews name:
// the host's own id when it gave one (an `id` attribute on an <attachment> block, `file.file_id`
// or an `id` on a file part), else "att_" + the low 48 bits of FNV-1a (64-bit) over the UTF-8 text.

const OPEN = '<attachment';
const CLOSE = '</attachment>';

/** FNV-1a 64-bit over the UTF-8 bytes of `text`, in two 32-bit halves (no BigInt per byte). */
export function contentId(text) {
  let lo = 0x84222325;
  let hi = 0xcbf29ce4;
  for (const b of new TextEncoder().encode(text)) {
    lo = (lo ^ b) >>> 0;
    // h * 0x100000001b3 = h * 0x1b3 + (h << 40), modulo 2^64.
    const a = lo * 0x1b3;
    const carry = Math.floor(a / 0x1_0000_0000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) % 0x1_0000_0000;
    lo = a >>> 0;
  }
  return `att_${((hi & 0xffff) >>> 0).toString(16).padStart(4, '0')}${lo.toString(16).padStart(8, '0')}`;
}

/** Attribute `key="value"` (or single quotes) of an opening tag, as ctxguard reads it. */
function attr(tag, key) {
  const m = new RegExp(`(?:^|\\s)${key}\\s*=\\s*(["'])(.*?)\\1`, 's').exec(tag);
  return m ? m[2] : null;
}

/** The <attachment ...>…</attachment> blocks of a text, with the same boundaries as ctxguard. */
function blocks(text, where, out) {
  let pos = 0;
  for (;;) {
    const start = text.indexOf(OPEN, pos);
    if (start === -1) return;
    const after = start + OPEN.length;
    if (!/^[>\s]/.test(text.slice(after, after + 1))) {
      pos = after;
      continue;
    }
    const close = text.indexOf(CLOSE, after);
    if (close === -1) return;
    const block = text.slice(start, close);
    const tagEnd = block.indexOf('>') + 1;
    const tag = block.slice(0, tagEnd);
    const body = block.slice(tagEnd);
    out.push({ id: attr(tag, 'id') ?? contentId(body), name: attr(tag, 'name') ?? attr(tag, 'filename'), type: attr(tag, 'type') ?? attr(tag, 'mime'), text: body, where, form: '<attachment> block' });
    pos = close + CLOSE.length;
  }
}

const TEXT_TYPES = /^(text(\/.*)?|application\/(json|xml|javascript|x-javascript|yaml|x-yaml|toml|x-ndjson)|.*\+(json|xml))$/;
const isTextType = (mt) => typeof mt === 'string' && TEXT_TYPES.test(mt.split(';')[0].trim().toLowerCase());

/** Base64 as UTF-8 text, or null. */
function fromBase64(b64) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/**
 * The text of an AI SDK file part, as ctxguard reads it (src/format/ai_sdk.rs): AI SDK 7 inline
 * text, or base64 / a base64 `data:` URL of a textual media type; otherwise null.
 */
function aiSdkFileText(p) {
  const d = p.data;
  if (d?.type === 'text' && typeof d.text === 'string') return { text: d.text, type: p.mediaType ?? null };
  if (typeof d !== 'string') return null;
  const url = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(d);
  const type = p.mediaType ?? p.mimeType ?? url?.[1] ?? null;
  if (!isTextType(type) && !isTextType(url?.[1])) return null;
  if (url) return url[2]?.includes(';base64') ? { text: fromBase64(url[3]), type } : null;
  return /^[A-Za-z0-9+/=\s]*$/.test(d) ? { text: fromBase64(d), type } : null;
}

function fromContent(content, where, out) {
  if (typeof content === 'string') {
    blocks(content, where, out);
    return;
  }
  for (const p of Array.isArray(content) ? content : []) {
    if (p?.type === 'text' && typeof p.text === 'string') blocks(p.text, where, out);
    else if (p?.type === 'file' && 'data' in p) {
      const file = aiSdkFileText(p);
      if (typeof file?.text !== 'string') continue;
      out.push({ id: typeof p.id === 'string' ? p.id : contentId(file.text), name: p.filename ?? null, type: file.type, text: file.text, where, form: 'file part' });
    } else if (p?.type === 'file') {
      const text = typeof p.text === 'string' ? p.text : p.file?.text;
      if (typeof text !== 'string') continue;
      const type = /^data:([^;,]+)/.exec(p.file?.file_data ?? '')?.[1] ?? null;
      out.push({ id: p.file?.file_id ?? p.id ?? contentId(text), name: p.file?.filename ?? null, type, text, where, form: 'file part' });
    } else if (p?.type === 'document') {
      const s = p.source;
      const text = s?.type === 'text' ? s.data
        : s?.type === 'content' ? (typeof s.content === 'string' ? s.content : (s.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('\n'))
          : null;
      if (typeof text !== 'string') continue;
      out.push({ id: p.id ?? contentId(text), name: p.title ?? null, type: s.media_type ?? null, text, where, form: 'document block' });
    } else if (p?.type === 'tool_result') fromContent(p.content, where, out);
  }
}

/** Every attachment with text in a parsed conversation `{ messages, system }`, in order. */
export function findAttachments({ messages, system }) {
  const out = [];
  if (system !== undefined && system !== null) fromContent(system, 'system', out);
  (Array.isArray(messages) ? messages : []).forEach((m, i) => fromContent(m?.content, `#${i}`, out));
  return out;
}

/**
 * The read_attachment calls that the model-visible previews suggest, by attachment id:
 * `read_attachment({"id": "att_…", "offset": 147})` in a preview's footer.
 */
export function previewOffsets(visibleMessages) {
  const found = new Map();
  const text = JSON.stringify(visibleMessages ?? []);
  // The footer is inside a JSON string here, so its quotes are escaped.
  for (const m of text.matchAll(/read_attachment\((\{.*?\})\)/g)) {
    try {
      const call = JSON.parse(JSON.parse(`"${m[1]}"`));
      if (typeof call.id === 'string' && Number.isInteger(call.offset)) found.set(call.id, call.offset);
    } catch {
      // Not a call we can read; the explorer simply offers no shortcut for it.
    }
  }
  return found;
}
