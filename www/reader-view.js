// The on-demand reader: pages through an attachment's full text (kept by the page, the raw view)
// with readAttachment(source, { id, offset, limit }), the call that answers the model's
// read_attachment tool. `api` is the page's worker (ctxguard/worker): the calls are asynchronous.

import { fill, fmt, h, pct } from './dom.js';

/** A small page so that the sample's attachments take a few pages. */
const PAGE_TOKENS = 120;

export function createReader(root, api) {
  let attachments = [];
  let offsets = new Map();
  let source = new Map();
  let encoding = 'o200k_base';
  let format = 'openai';
  const state = { id: null, offset: 0, limit: PAGE_TOKENS };

  const select = h('select', { id: 'reader-attachment' });
  const offsetInput = h('input', { id: 'reader-offset-input', type: 'number', min: '0', step: '1', inputmode: 'numeric' });
  const limitInput = h('input', { id: 'reader-limit-input', type: 'number', min: '1', max: '8000', step: '1', inputmode: 'numeric', placeholder: '2000' });
  const nextButton = h('button', { id: 'reader-next', type: 'button', class: 'button' }, 'Next page →');
  const startButton = h('button', { id: 'reader-start', type: 'button', class: 'button' }, '⟲ Start');
  const previewButton = h('button', { id: 'reader-continue', type: 'button', class: 'link' });
  const out = h('div', { class: 'reader-out', 'aria-live': 'polite' });
  const tool = h('pre', { class: 'reader-tool' });

  fill(root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Read an attachment'),
      h('p', { class: 'muted small' }, 'the on-demand reader behind the previews')),
    h('p', { class: 'hint' },
      'The model gets a preview; the full text stays here, with the host. ', h('code', {}, 'readAttachment(source, { id, offset, limit })'),
      ' pages through it by tokens — the same call answers the model\'s ', h('code', {}, 'read_attachment'), ' tool.'),
    h('div', { class: 'reader-controls' },
      h('label', { class: 'field grow' }, h('span', {}, 'Attachment'), select),
      h('label', { class: 'field num-field' }, h('span', {}, 'Offset'), offsetInput),
      h('label', { class: 'field num-field' }, h('span', {}, 'Limit'), limitInput),
      h('div', { class: 'reader-buttons' }, startButton, nextButton)),
    previewButton,
    out,
    h('details', { class: 'reader-def' }, h('summary', {}, 'The read_attachment tool definition for the model (readAttachmentTool)'), tool));

  let reads = 0;
  async function read() {
    const mine = ++reads;
    const att = attachments.find((a) => a.id === state.id);
    if (!att) {
      fill(out, h('p', { class: 'muted' }, 'This conversation has no attachment text to read.'));
      nextButton.disabled = true;
      return;
    }
    offsetInput.value = String(state.offset);
    limitInput.value = state.limit === null ? '' : String(state.limit);
    const options = { id: att.id, offset: state.offset, encoding };
    if (state.limit !== null) options.limit = state.limit;
    const call = `readAttachment(source, ${JSON.stringify(options).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ')})`;
    let page;
    try {
      page = await api.readAttachment(source, options);
      if (mine !== reads) return;
    } catch (e) {
      if (mine !== reads) return;
      fill(out,
        h('p', { class: 'reader-call' }, h('code', {}, call)),
        h('p', { class: 'reader-error', id: 'reader-error' }, '✕ ', h('code', {}, e?.code ?? e?.name ?? 'Error'), ' ', e?.message ?? String(e)));
      nextButton.disabled = true;
      return;
    }
    const end = page.nextOffset ?? page.totalTokens;
    nextButton.disabled = page.nextOffset === null;
    fill(out,
      h('p', { class: 'reader-call' }, h('code', {}, call)),
      h('dl', { class: 'reader-meta' },
        h('div', {}, h('dt', {}, 'offset'), h('dd', { id: 'reader-offset' }, fmt(page.offset))),
        h('div', {}, h('dt', {}, 'nextOffset'), h('dd', { id: 'reader-next-offset', 'data-value': JSON.stringify(page.nextOffset) }, page.nextOffset === null ? 'null (end)' : fmt(page.nextOffset))),
        h('div', {}, h('dt', {}, 'totalTokens'), h('dd', { id: 'reader-total' }, fmt(page.totalTokens))),
        h('div', {}, h('dt', {}, 'page'), h('dd', {}, `${fmt(page.text.length)} chars · ${pct(end / Math.max(1, page.totalTokens))} read`))),
      h('div', { class: 'reader-progress', 'aria-hidden': 'true' },
        h('span', { style: { left: `${(page.offset / Math.max(1, page.totalTokens)) * 100}%`, width: `${((end - page.offset) / Math.max(1, page.totalTokens)) * 100}%` } })),
      h('pre', { class: 'reader-text', id: 'reader-text', tabindex: '0' }, page.text));
  }

  function showContinue() {
    const at = offsets.get(state.id);
    previewButton.hidden = at === undefined;
    previewButton.textContent = at === undefined ? '' : `Continue where the model-visible preview stops (offset ${fmt(at)}), as its footer suggests`;
  }

  select.addEventListener('change', () => {
    state.id = select.value;
    state.offset = 0;
    showContinue();
    read();
  });
  const numberOf = (input, fallback) => {
    const v = input.value.trim();
    return v === '' ? fallback : Math.max(0, Math.floor(Number(v)) || 0);
  };
  offsetInput.addEventListener('change', () => {
    state.offset = numberOf(offsetInput, 0);
    read();
  });
  limitInput.addEventListener('change', () => {
    state.limit = numberOf(limitInput, null);
    read();
  });
  nextButton.addEventListener('click', () => {
    const next = out.querySelector('#reader-next-offset')?.dataset.value;
    const n = next ? JSON.parse(next) : null;
    if (n === null) return;
    state.offset = n;
    read();
  });
  startButton.addEventListener('click', () => {
    state.offset = 0;
    read();
  });
  previewButton.addEventListener('click', () => {
    state.offset = offsets.get(state.id) ?? 0;
    read();
  });

  return {
    /**
     * @param list     listAttachments() of the raw conversation (ctxguard's, in the worker)
     * @param previews id -> offset of each preview in the model-visible messages (from their
     *                 listAttachments(): the offset the preview's footer points at)
     */
    update(list, previews, options) {
      const before = attachments.find((a) => a.id === state.id);
      attachments = list;
      offsets = previews;
      source = new Map(list.map((a) => [a.id, a.text]));
      encoding = options.encoding;
      format = options.format;
      fill(select, list.map((a) => h('option', { value: a.id },
        `${a.name ?? a.id}${a.mediaType ? ` (${a.mediaType})` : ''} · ${a.message === null ? 'system' : `#${a.message}`} · ${previews.has(a.id) ? 'previewed' : 'sent whole'}`)));
      select.disabled = list.length === 0;
      if (!list.some((a) => a.id === state.id)) {
        // A new conversation: start with the first previewed attachment.
        state.id = (list.find((a) => previews.has(a.id)) ?? list[0])?.id ?? null;
        state.offset = 0;
      } else if (before && before.text !== source.get(state.id)) state.offset = 0;
      if (state.id) select.value = state.id;
      api.readAttachmentTool({ format }).then((t) => {
        tool.textContent = JSON.stringify(t, null, 2);
      }, (e) => {
        tool.textContent = `${e?.code ?? e?.name}: ${e?.message}`;
      });
      showContinue();
      read();
    },
  };
}
