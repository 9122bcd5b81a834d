// Small DOM and number helpers shared by the views.

/**
 * Create an element: h('div', { class: 'x', style: { width: '3%' } }, 'text', child).
 * Attributes whose value is null, undefined or false are skipped; children may be nested arrays.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'style' && typeof value === 'object') Object.assign(el.style, value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace all children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

/** 12345 -> "12,345". */
export const fmt = (n) => integer.format(n);
/** 0.1234 -> "12.3%". */
export const pct = (r) => percent.format(r);
/** Compact window sizes: 128000 -> "128k", 131072 -> "128k", 16385 -> "16.4k", 1048576 -> "1M". */
export function short(n) {
  if (n % 1_048_576 === 0) return `${n / 1_048_576}M`;
  if (n >= 1_000_000) return `${+(n / 1e6).toFixed(2)}M`;
  if (n % 1000 === 0) return `${n / 1000}k`;
  if (n % 1024 === 0) return `${n / 1024}k`;
  if (n >= 1000) return `${+(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k`;
  return String(n);
}
