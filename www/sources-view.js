// Raw and model-visible text of one message, side by side as a line diff: lines the model does
// not get are marked on the raw side, lines ctxguard added (its marker line, the preview footer,
// JSON omission notes) on the model-visible side. Long runs fold into a row that opens on click.

import { fmt, h } from './dom.js';

/** What ctxguard writes into the model-visible view (src/sources/tool_output.rs, stub.rs, found.rs). */
const MARKERS = /\[ctxguard:(?:compacted-tool-output|cleared-tool-output|attachment-preview)\]|\[… \d+ items omitted …\]|…\[\+\d+ chars\]/g;
/** Above this many line pairs, the diff keeps only the common head and tail (no LCS). */
const LCS_CELLS = 4_000_000;
/** Unchanged lines shown around a change. */
const CONTEXT = 3;
/** A change longer than this many rows shows its first and last rows and folds the middle. */
const LONG_CHANGE = 12;
/** Rows drawn at most, folds included, so a huge message cannot stall the page. */
const MAX_ROWS = 3000;

/** The guards that changed a message, from what its model-visible text carries. */
export function changeKinds(visibleText) {
  const kinds = [];
  if (visibleText.includes('[ctxguard:compacted-tool-output]')) kinds.push('compacted');
  if (visibleText.includes('[ctxguard:cleared-tool-output]')) kinds.push('cleared');
  if (visibleText.includes('[ctxguard:attachment-preview]')) kinds.push('preview');
  return kinds;
}

function partText(p) {
  if (typeof p === 'string') return p;
  switch (p?.type) {
    case 'text': return p.text ?? '';
    case 'image_url': return `[image${p.image_url?.detail ? ` · ${p.image_url.detail}` : ''}]`;
    case 'image': return '[image]';
    case 'file': return `[file part: ${p.file?.filename ?? 'file'}]\n${p.text ?? p.file?.text ?? ''}`;
    case 'document': return `[document: ${p.title ?? p.source?.media_type ?? 'document'}]\n${p.source?.data ?? (typeof p.source?.content === 'string' ? p.source.content : (p.source?.content ?? []).map(partText).join('\n'))}`;
    case 'tool_use': return `→ ${p.name}(${JSON.stringify(p.input ?? {})})`;
    case 'tool_result': return typeof p.content === 'string' ? p.content : (p.content ?? []).map(partText).join('\n');
    // OpenAI Responses parts.
    case 'input_text': case 'output_text': return p.text ?? '';
    case 'input_image': return `[image${p.detail ? ` · ${p.detail}` : ''}]`;
    case 'input_file': return `[file part: ${p.filename ?? 'file'}]\n${dataText(p.file_data)}`;
    case undefined: return geminiPartText(p);
    default: return `[${p?.type ?? 'part'}]`;
  }
}

/** The text of a text data URL (`data:text/plain;base64,...`), or '' for anything else. */
function dataText(url) {
  const m = /^data:(?:text\/[^;,]*|application\/json)[^,]*;base64,(.*)$/s.exec(url ?? '');
  return m ? base64Text(m[1]) : '';
}

function base64Text(data) {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  } catch {
    return '';
  }
}

/** A Gemini part (no `type`): text, a function call or response, inline data. */
function geminiPartText(p) {
  if (typeof p?.text === 'string') return p.text;
  if (p?.functionCall) return `→ ${p.functionCall.name}(${JSON.stringify(p.functionCall.args ?? {})})`;
  if (p?.functionResponse) {
    const r = p.functionResponse.response;
    const values = r && typeof r === 'object' ? Object.values(r) : [];
    return values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(r ?? null);
  }
  if (p?.inlineData) return /^(text\/|application\/json)/.test(p.inlineData.mimeType ?? '') ? `[file part: ${p.inlineData.displayName ?? p.inlineData.mimeType}]\n${base64Text(p.inlineData.data ?? '')}` : `[${p.inlineData.mimeType ?? 'inline data'}]`;
  if (p?.fileData) return `[file: ${p.fileData.fileUri ?? ''}]`;
  return '[part]';
}

/** One message as readable text (the same rendering for both views, so only the guards differ). */
export function messageText(m) {
  const content = m?.content ?? m?.parts;
  const parts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map(partText) : [];
  // A Gemini functionResponse part (a row of its own).
  if (m?.functionResponse) parts.push(geminiPartText(m));
  for (const c of m?.tool_calls ?? []) parts.push(`→ ${c.function?.name}(${c.function?.arguments ?? ''})`);
  // OpenAI Responses call and output items.
  if (typeof m?.arguments === 'string' && m?.name) parts.push(`→ ${m.name}(${m.arguments})`);
  if (typeof m?.output === 'string') parts.push(m.output);
  else if (Array.isArray(m?.output)) parts.push(...m.output.map(partText));
  // An AI SDK tool-result part (a row of its own).
  else if (m?.type === 'tool-result') parts.push(typeof m.output?.value === 'string' ? m.output.value : JSON.stringify(m.output?.value ?? m.output ?? null));
  return parts.join('\n');
}

/**
 * Line diff of `a` (raw) against `b` (model-visible), as operations in order:
 * ['same', i, j], ['gone', i] (raw line i not sent), ['added', j] (visible line j is new).
 * LCS over lines; for huge pairs, the common head and tail only.
 */
export function lineDiff(a, b) {
  const ops = [];
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) ops.push(['same', head, head++]);
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n * m > LCS_CELLS) {
    for (let i = 0; i < n; i++) ops.push(['gone', head + i]);
    for (let j = 0; j < m; j++) ops.push(['added', head + j]);
  } else {
    // dp[i * w + j] = LCS length of a[head+i..] and b[head+j..] (middle part only).
    const w = m + 1;
    const dp = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        dp[i * w + j] = a[head + i] === b[head + j] ? dp[(i + 1) * w + j + 1] + 1 : Math.max(dp[(i + 1) * w + j], dp[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[head + i] === b[head + j]) ops.push(['same', head + i++, head + j++]);
      else if (i < n && (j === m || dp[(i + 1) * w + j] >= dp[i * w + j + 1])) ops.push(['gone', head + i++]);
      else ops.push(['added', head + j++]);
    }
  }
  for (let k = tail; k > 0; k--) ops.push(['same', a.length - k, b.length - k]);
  return ops;
}

/**
 * Display rows: ['pair', left, right] where left/right are [kind, lineIndex] or null, and
 * ['fold', rows, label] for a folded run.
 */
function rowsOf(ops) {
  const rows = [];
  const fold = (run, label) => rows.push(['fold', run, label]);
  let k = 0;
  while (k < ops.length) {
    if (ops[k][0] === 'same') {
      const run = [];
      while (k < ops.length && ops[k][0] === 'same') run.push(['pair', ['same', ops[k][1]], ['same', ops[k++][2]]]);
      const first = rows.length === 0;
      const last = k === ops.length;
      const keepHead = first ? 0 : CONTEXT;
      const keepTail = last ? 0 : CONTEXT;
      if (run.length > keepHead + keepTail + 1) {
        rows.push(...run.slice(0, keepHead));
        const hidden = run.slice(keepHead, run.length - keepTail);
        fold(hidden, `${fmt(hidden.length)} unchanged line${hidden.length === 1 ? '' : 's'}`);
        rows.push(...run.slice(run.length - keepTail));
      } else rows.push(...run);
      continue;
    }
    const gone = [];
    const added = [];
    while (k < ops.length && ops[k][0] !== 'same') {
      if (ops[k][0] === 'gone') gone.push(ops[k++][1]);
      else added.push(ops[k++][1]);
    }
    const run = [];
    for (let r = 0; r < Math.max(gone.length, added.length); r++) {
      run.push(['pair', r < gone.length ? ['gone', gone[r]] : null, r < added.length ? ['added', added[r]] : null]);
    }
    if (run.length > LONG_CHANGE) {
      const keepHead = Math.max(added.length, 4);
      const hidden = run.slice(keepHead, run.length - 2);
      rows.push(...run.slice(0, keepHead));
      if (hidden.length) fold(hidden, `${fmt(hidden.length)} more line${hidden.length === 1 ? '' : 's'} not sent to the model`);
      rows.push(...run.slice(keepHead + hidden.length));
    } else rows.push(...run);
  }
  return rows;
}

/** A line with ctxguard's markers wrapped in <mark>. */
function withMarks(line) {
  const out = [];
  let at = 0;
  for (const m of line.matchAll(MARKERS)) {
    out.push(line.slice(at, m.index), h('mark', { class: 'marker-token' }, m[0]));
    at = m.index + m[0].length;
  }
  out.push(line.slice(at));
  return out;
}

function cell(side, lines) {
  if (side === null) return h('div', { class: 'cell empty' });
  const [kind, i] = side;
  const line = lines[i];
  MARKERS.lastIndex = 0;
  const marker = kind === 'added' && MARKERS.test(line);
  MARKERS.lastIndex = 0;
  return h('div', { class: `cell ${kind}${marker ? ' marker-line' : ''}`, 'data-n': i + 1 }, kind === 'added' ? withMarks(line) : line);
}

function drawRows(rows, a, b, budget) {
  const out = [];
  for (const row of rows) {
    if (budget.left-- <= 0) {
      out.push(h('div', { class: 'diff-row fold' }, h('span', { class: 'muted' }, '… the rest is not drawn here (very long message); see the JSON below')));
      break;
    }
    if (row[0] === 'pair') {
      out.push(h('div', { class: 'diff-row' }, cell(row[1], a), cell(row[2], b)));
      continue;
    }
    const [, hidden, label] = row;
    const button = h('button', { type: 'button', class: 'fold-button' }, `⋯ ${label}`, h('span', { class: 'fold-show' }, 'show'));
    const el = h('div', { class: `diff-row fold${label.includes('not sent') ? ' fold-gone' : ''}` }, button);
    button.addEventListener('click', () => el.replaceWith(...drawRows(hidden, a, b, { left: MAX_ROWS })));
    out.push(el);
  }
  return out;
}

/** The side-by-side comparison of one changed message. */
export function comparePanes(rawMessage, visibleMessage, rawTokens, visibleTokens) {
  const rawText = messageText(rawMessage);
  const visText = messageText(visibleMessage);
  const a = rawText.split('\n');
  const b = visText.split('\n');
  const ops = lineDiff(a, b);
  const gone = ops.filter((o) => o[0] === 'gone').length;
  const added = ops.length - gone - ops.filter((o) => o[0] === 'same').length;
  const head = (title, text, lines, tokens, note, cls) =>
    h('div', { class: 'pane-head' },
      h('strong', {}, title),
      h('span', { class: 'muted' }, `${fmt(tokens)} tok · ${fmt(lines.length)} lines · ${fmt(text.length)} chars`),
      h('span', { class: `pane-note ${cls}` }, note));
  return h('div', { class: 'compare' },
    h('div', { class: 'diff-row diff-head' },
      head('Raw view', rawText, a, rawTokens, `${fmt(gone)} line${gone === 1 ? '' : 's'} not sent`, 'raw'),
      head('Model-visible view', visText, b, visibleTokens, `${fmt(added)} line${added === 1 ? '' : 's'} added by ctxguard`, 'visible')),
    h('div', { class: 'diff-body', tabindex: '0' }, drawRows(rowsOf(ops), a, b, { left: MAX_ROWS })));
}
