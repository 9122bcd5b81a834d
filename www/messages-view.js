// The message list: every message of the raw view with its token count, next to its count in the
// model-visible view that guardSources() returned. Messages a source guard changed carry a badge
// and open a side-by-side comparison; unchanged ones are dimmed.

import { fill, fmt, h } from './dom.js';
import { changeKinds, comparePanes, messageText } from './sources-view.js';

const RAW_LIMIT = 20_000;
/** Comparisons open at first; later changed messages start closed (they render when opened). */
const OPEN_COMPARISONS = 12;
/**
 * Rows drawn at first and per "Show more": a 2,000-message conversation is drawn in pages, so no
 * single task builds thousands of rows. Shorter lists are drawn whole (and their first
 * comparisons open).
 */
const PAGE_ROWS = 100;
const KIND_LABEL = { compacted: 'tool output compacted', cleared: 'tool output cleared', preview: 'attachment preview' };

function jsonText(m) {
  const text = JSON.stringify(m, null, 2) ?? String(m);
  return text.length > RAW_LIMIT ? `${text.slice(0, RAW_LIMIT)}\n… (${fmt(text.length - RAW_LIMIT)} more characters)` : text;
}

/** A collapsed JSON disclosure; the JSON is rendered only when it is opened. */
function jsonDetails(label, message) {
  const details = h('details', { class: 'raw' }, h('summary', {}, label));
  details.addEventListener('toggle', () => {
    if (details.open && !details.querySelector('pre')) details.append(h('pre', {}, jsonText(message)));
  });
  return details;
}

/** A disclosure with the side-by-side panes, built when first opened. */
function compareDetails(raw, visible, rawTokens, visTokens, open) {
  const details = h('details', { class: 'compare-details', open }, h('summary', {}, 'Raw and model-visible, side by side'));
  const build = () => {
    if (details.open && !details.querySelector('.compare')) details.append(comparePanes(raw, visible, rawTokens, visTokens));
  };
  details.addEventListener('toggle', build);
  build();
  return details;
}

const tokensCell = (tokens, cls, max) =>
  h('span', { class: cls },
    tokens === null ? '' : [h('span', { class: 'num', 'data-value': tokens }, fmt(tokens)), h('span', { class: 'unit' }, ' tok')],
    tokens === null ? null : h('span', { class: 'mini', 'aria-hidden': 'true' }, h('span', { style: { width: `${(tokens / max) * 100}%` } })));

/**
 * @param rows     rowsFor() of the raw conversation: one per counted message (countMessages' places)
 * @param counts   countMessages() of the raw conversation
 * @param visible  { rows, counts } of the model-visible conversation (guardSources' messages)
 */
export function renderMessages(root, rows, counts, visible) {
  const per = counts?.perMessage ?? [];
  const vper = visible?.counts?.perMessage ?? [];
  const aligned = per.length === rows.length;
  const paired = visible?.rows?.length === rows.length && vper.length === rows.length;
  const max = per.reduce((a, b) => Math.max(a, b), 1);
  const paged = rows.length > PAGE_ROWS;
  let opened = 0;
  // What each row is (cheap), before any element: a message the guards left alone is the same
  // object in both views.
  const data = rows.map((r, i) => {
    const v = paired ? visible.rows[i] : null;
    return { r, i, v, changed: v !== null && r.raw !== v.raw && JSON.stringify(r.raw) !== JSON.stringify(v.raw) };
  });
  const changedCount = data.reduce((n, d) => n + (d.changed ? 1 : 0), 0);
  const item = ({ r, i, v, changed }) => {
    const tokens = aligned ? per[i] : null;
    const vtokens = paired ? vper[i] : null;
    const kinds = changed ? changeKinds(messageText(v.raw)) : [];
    return h('li', { class: `msg role-${r.role}${changed ? ' changed' : ' unchanged'}`, 'data-changed': changed ? kinds.join(' ') || 'other' : null },
      h('div', { class: 'msg-line' },
        typeof r.wireIndex === 'number'
          ? h('span', { class: 'msg-index' }, `#${r.wireIndex}`)
          : h('span', { class: 'msg-index', title: 'The request\'s separate system prompt' }, 'sys'),
        h('span', { class: `role role-${r.role}` }, r.role),
        h('div', { class: 'msg-body' },
          changed
            ? h('p', { class: 'change' },
              (kinds.length ? kinds : ['other']).map((k) => h('span', { class: `change-badge kind-${k}` }, KIND_LABEL[k] ?? 'changed')),
              h('span', { class: 'change-tokens' }, `${fmt(tokens ?? 0)} → ${fmt(vtokens ?? 0)} tokens`))
            : null,
          h('p', { class: 'preview' },
            r.ref ? h('span', { class: 'ref' }, `↳ ${r.ref} `) : null,
            r.preview || h('span', { class: 'muted' }, r.chips.length ? '' : '(empty)')),
          r.chips.length || r.lines > 3
            ? h('p', { class: 'chips' },
              r.chips.map((c) => h('span', { class: `chip chip-${c.kind}` }, c.label)),
              r.lines > 3 ? h('span', { class: 'chip chip-size' }, `${fmt(r.lines)} lines · ${fmt(r.chars)} chars`) : null)
            : null),
        tokensCell(tokens, 'msg-tokens', max),
        v === null ? h('span', {})
          : changed
            ? h('span', { class: 'msg-visible changed' },
              h('span', { class: 'vnum', 'data-value': vtokens }, fmt(vtokens)), h('span', { class: 'unit' }, ' tok'),
              h('span', { class: 'saved' }, `−${fmt(Math.max(0, (tokens ?? 0) - vtokens))}`))
            : h('span', { class: 'msg-visible same', title: 'Sent as it is' }, h('span', { class: 'vnum', 'data-value': vtokens }, `= ${fmt(vtokens)}`))),
      changed ? compareDetails(r.raw, v.raw, tokens ?? 0, vtokens ?? 0, !paged && opened++ < OPEN_COMPARISONS) : null,
      h('div', { class: 'json-links' },
        jsonDetails('raw JSON', r.raw),
        changed ? jsonDetails('model-visible JSON', v.raw) : null));
  };

  const overhead = counts
    ? `Counts include each message's framing. Also in the request: tool definitions ${fmt(counts.toolDefinitions)}, reply priming ${fmt(counts.priming)}; raw total ${fmt(counts.total)}${visible?.counts ? `, model-visible ${fmt(visible.counts.total)}` : ''}.`
    : '';
  const onlyChanged = h('input', { type: 'checkbox', id: 'only-changed' });
  const list = h('ol', { class: `messages${paired && changedCount === 0 ? ' none-changed' : ''}`, id: 'messages' },
    paired ? h('li', { class: 'msg-cols', 'aria-hidden': 'true' }, h('span', {}), h('span', {}), h('span', {}, `${fmt(changedCount)} of ${fmt(rows.length)} changed by the source guards`), h('span', {}, 'Raw'), h('span', {}, 'Model-visible')) : null);
  // Paged drawing: the rows of `pool` from `shown` on, PAGE_ROWS at a time.
  let pool = data;
  let shown = 0;
  const moreButton = h('button', { type: 'button', class: 'button', id: 'messages-more' });
  const more = h('li', { class: 'msg-more' }, moreButton);
  const drawMore = () => {
    more.remove();
    const next = pool.slice(shown, paged ? shown + PAGE_ROWS : pool.length);
    list.append(...next.map(item));
    shown += next.length;
    if (shown < pool.length) {
      moreButton.textContent = `Show ${fmt(Math.min(PAGE_ROWS, pool.length - shown))} more (${fmt(pool.length - shown)} not drawn yet)`;
      list.append(more);
    }
  };
  moreButton.addEventListener('click', drawMore);
  drawMore();
  onlyChanged.addEventListener('change', () => {
    list.classList.toggle('only-changed', onlyChanged.checked);
    if (!paged) return;
    // Paged: draw the changed rows (or all) from the start.
    for (const li of [...list.querySelectorAll(':scope > li.msg, :scope > li.msg-more')]) li.remove();
    pool = onlyChanged.checked ? data.filter((d) => d.changed) : data;
    shown = 0;
    drawMore();
  });
  fill(
    root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Messages ', h('span', { class: 'muted' }, visible ? '(raw → model-visible)' : '(raw view)')),
      paired ? h('label', { class: 'toggle small' }, onlyChanged, ' changed only') : null),
    h('p', { class: 'muted small card-note' }, overhead),
    counts && !aligned
      ? h('p', { class: 'notice' }, `ctxguard counted ${per.length} internal messages for ${rows.length} rows; counts are shown in ctxguard's order.`)
      : null,
    visible && !paired ? h('p', { class: 'notice' }, 'The model-visible view does not line up with the raw rows here, so only raw counts are shown.') : null,
    paired && changedCount === 0 ? h('p', { class: 'all-same', id: 'all-same' }, '✓ The model gets every message as it is: each tool output fits its limit and the attachments fit their budget.') : null,
    list,
    counts && !aligned ? h('p', { class: 'muted small' }, `perMessage: ${per.map(fmt).join(', ')}`) : null,
  );
}
