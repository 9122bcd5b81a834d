// The raw view: every message as the user sees it, with its token count from countMessages().

import { fill, fmt, h } from './dom.js';

const RAW_LIMIT = 20_000;

function rawText(m) {
  const text = JSON.stringify(m, null, 2) ?? String(m);
  return text.length > RAW_LIMIT ? `${text.slice(0, RAW_LIMIT)}\n… (${fmt(text.length - RAW_LIMIT)} more characters)` : text;
}

/** A collapsed "raw JSON" disclosure; the JSON is rendered only when it is opened. */
function rawDetails(message) {
  const details = h('details', { class: 'raw' }, h('summary', {}, 'raw JSON'));
  details.addEventListener('toggle', () => {
    if (details.open && !details.querySelector('pre')) details.append(h('pre', {}, rawText(message)));
  });
  return details;
}

/**
 * @param rows   from rowsOf(): one per internal message
 * @param counts countMessages() result, or null when it failed
 */
export function renderMessages(root, rows, counts) {
  const per = counts?.perMessage ?? [];
  const aligned = per.length === rows.length;
  const max = Math.max(1, ...per);
  const overhead = counts
    ? `Counts per message include their framing. Also in the request: tool definitions ${fmt(counts.toolDefinitions)}, reply priming ${fmt(counts.priming)}; total ${fmt(counts.total)}.`
    : '';
  fill(
    root,
    h('div', { class: 'card-head' },
      h('h2', {}, 'Messages ', h('span', { class: 'muted' }, '(raw view)')),
      h('p', { class: 'muted small' }, overhead)),
    counts && !aligned
      ? h('p', { class: 'notice' }, `ctxguard counted ${per.length} internal messages for ${rows.length} rows; counts are shown in ctxguard's order.`)
      : null,
    h('ol', { class: 'messages', id: 'messages' },
      rows.map((r, i) => {
        const tokens = aligned ? per[i] : null;
        return h('li', { class: `msg role-${r.role}` },
          h('div', { class: 'msg-line' },
            typeof r.wireIndex === 'number'
              ? h('span', { class: 'msg-index' }, `#${r.wireIndex}`)
              : h('span', { class: 'msg-index', title: 'The request\'s separate system prompt' }, 'sys'),
            h('span', { class: `role role-${r.role}` }, r.role),
            h('div', { class: 'msg-body' },
              h('p', { class: 'preview' },
                r.ref ? h('span', { class: 'ref' }, `↳ ${r.ref} `) : null,
                r.preview || h('span', { class: 'muted' }, r.chips.length ? '' : '(empty)')),
              r.chips.length || r.lines > 3
                ? h('p', { class: 'chips' },
                  r.chips.map((c) => h('span', { class: `chip chip-${c.kind}` }, c.label)),
                  r.lines > 3 ? h('span', { class: 'chip chip-size' }, `${fmt(r.lines)} lines · ${fmt(r.chars)} chars`) : null)
                : null),
            h('span', { class: 'msg-tokens' },
              tokens === null ? '' : [h('span', { class: 'num', 'data-value': tokens }, fmt(tokens)), h('span', { class: 'unit' }, ' tok')],
              tokens === null ? null : h('span', { class: 'mini', 'aria-hidden': 'true' }, h('span', { style: { width: `${(tokens / max) * 100}%` } })))),
          rawDetails(r.raw));
      })),
    counts && !aligned ? h('p', { class: 'muted small' }, `perMessage: ${per.map(fmt).join(', ')}`) : null,
  );
}
