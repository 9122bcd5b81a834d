// The built-in sample: one realistic OpenAI Chat Completions request from a coding assistant,
// captured just before the next model call. It has a system prompt, parallel tool calls with
// JSON arguments, a long test log, a JSON tool output, an attachment (an <attachment> block in
// the text plus a `file` part with extracted text), a screenshot (a real 240×160 PNG, 442 bytes),
// a Japanese turn and three tool definitions. Long parts are generated deterministically below,
// so this file stays readable; the page shows the resulting JSON in the editor.

/** A 240×160 palette PNG, a mock "CI failed" card (drawn pixel by pixel with Python's zlib). */
const CI_SCREENSHOT =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAPAAAACgCAMAAAAFBRFXAAAAGFBMVEUNERcWGyIwNj34UUn///+LlJ4/uVBYpv+8Cnu0AAABXUlEQVR42u3bwU7CQBSGUcwVfP831pKqrYsyiWjb/55vNWwgJ4WZ6TRcXpp1AQYGBgYGPiC45qbxdW4a3+aAgYGBgYGBbTyAgYGBgYGTwJIkSZJ+X7sbBmBgYGBgYGDg3cHVCFzfdQDXunhwVYZ4FFwVIh4EV6WIx8BVD8WvO/Un4An38d4L6vwqGbwSf45DwT+Uy1E0+Mu5uNbZ4Fm6/G6Hg+/W1eyVDq77Z1Q4eLX0rr0n3Hw87Qpngjd+w5HgrVk6Eby5Dl+f3AHA2zutJPDQXjoO/OhuKQo8cj+cBR448QgDtzvT6ndq2e9cut+Th4bPliICBgYGBgYGBgbeFXw7ZMDAwMBmaWBgYDutY83cwMDADcCWJWBg4FOBa6eAgYGBzdLAwMD54OupAwYGbge2LAEDA9tp7fSnLmBg4AZgyxIwMPCpwG//EDAwMLBZGhgYGBg4BSxJkiRpuHdVFdqgtzfN6QAAAABJRU5ErkJggg==';

export const tools = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file from the repository, optionally a range of lines.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Path relative to the repository root' },
          start_line: { type: 'integer', minimum: 1 },
          end_line: { type: 'integer', minimum: 1 },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_tests',
      description: 'Run the test suite (vitest) and return its output.',
      parameters: {
        type: 'object',
        properties: {
          pattern: { type: 'string', description: 'Only run test files matching this pattern' },
          reporter: { type: 'string', enum: ['default', 'verbose', 'json'] },
          update_snapshots: { type: 'boolean', default: false },
        },
        required: [],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'list_ci_runs',
      description: 'List recent CI runs of a branch with their status and commit.',
      parameters: {
        type: 'object',
        properties: {
          branch: { type: 'string' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          status: { type: 'string', enum: ['any', 'success', 'failure', 'cancelled'] },
        },
        required: ['branch'],
        additionalProperties: false,
      },
    },
  },
];

/** A small deterministic PRNG (mulberry32), so the generated parts never change. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUITES = {
  'src/billing/proration.test.ts': ['prorates an upgrade mid-cycle', 'prorates a downgrade mid-cycle', 'credits unused seats', 'charges the full period when upgraded on day one', 'splits a 31-day month evenly', 'handles leap-year February', 'rounds each line item before summing', 'keeps totals stable across currency conversions'],
  'src/billing/invoice.test.ts': ['renders line items in order', 'applies a percentage coupon', 'applies a fixed coupon after tax', 'omits zero-amount lines', 'formats JPY without decimals', 'formats EUR with a comma separator', 'numbers invoices per tenant', 'attaches the tax breakdown'],
  'src/billing/period.test.ts': ['starts the period at the anchor day', 'clamps the anchor day to the month length', 'rolls over at midnight in the tenant time zone', 'keeps the period length across DST changes', 'computes the next renewal date'],
  'src/tax/vat.test.ts': ['applies the reverse charge for B2B EU', 'uses the destination rate for B2C EU', 'exempts non-EU customers', 'rounds VAT per line (DE)', 'rounds VAT per invoice (FR)'],
  'src/money/convert.test.ts': ['converts USD to EUR with the daily rate', 'refuses stale rates', 'keeps minor units exact', 'round-trips through JPY'],
  'src/api/subscriptions.test.ts': ['POST /subscriptions creates a trial', 'PATCH /subscriptions/:id changes the plan', 'PATCH rejects a downgrade below used seats', 'DELETE cancels at period end', 'GET lists subscriptions with pagination', 'webhook: invoice.paid marks the period paid', 'webhook: ignores replayed events'],
  'src/api/usage.test.ts': ['records metered usage idempotently', 'aggregates usage per period', 'rejects usage for cancelled subscriptions'],
};

const FAILING = {
  'prorates an upgrade mid-cycle': ['1245.50', '1245.49'],
  'prorates a downgrade mid-cycle': ['-312.25', '-312.24'],
  'splits a 31-day month evenly': ['96.78', '96.77'],
  'rounds VAT per line (DE)': ['19.05', '19.04'],
  'rolls over at midnight in the tenant time zone': ['2026-03-01T00:00:00+09:00', '2026-02-28T15:00:00Z'],
};

/** The output of `run_tests` in verbose mode: a few hundred lines, five failures. */
function testLog() {
  const r = rng(4812);
  const out = [' RUN  v2.1.8 /home/runner/work/ledger-api/ledger-api', ''];
  let passed = 0;
  let failed = 0;
  const failures = [];
  for (const [file, names] of Object.entries(SUITES)) {
    const lines = [];
    let fileFailed = 0;
    for (let round = 0; round < 4; round++) {
      for (const name of names) {
        const title = round === 0 ? name : `${name} (${['monthly', 'quarterly', 'yearly'][round - 1]} plan)`;
        const ms = Math.floor(r() * 40) + 1;
        if (round === 0 && FAILING[name]) {
          lines.push(`   × ${title} ${ms}ms`);
          failures.push([file, title, ...FAILING[name]]);
          failed++;
          fileFailed++;
        } else {
          lines.push(`   ✓ ${title} ${ms}ms`);
          passed++;
        }
        if (name.startsWith('webhook')) {
          const evt = `evt_${Math.floor(r() * 1e12).toString(36)}`;
          out.push(`stdout | ${file} > ${title}`, `[webhook] ${evt} received (attempt 1)`, `[webhook] ${evt} ${name.includes('replayed') ? 'already processed, ignored' : 'applied'}`, '');
        }
      }
    }
    const total = Math.floor(r() * 300) + 40;
    out.push(` ${fileFailed ? '❯' : '✓'} ${file} (${names.length * 4} tests${fileFailed ? ` | ${fileFailed} failed` : ''}) ${total}ms`);
    out.push(...lines);
  }
  out.push('', '⎯'.repeat(22) + ` Failed Tests ${failures.length} ` + '⎯'.repeat(22), '');
  const CALLS = {
    proration: ['prorate(subscription, change)', 'result.total.toFixed(2)'],
    vat: ['vatLines(invoice, rules.DE)', 'result[0].amount.toFixed(2)'],
    period: ['periodBounds(tenantSub, at)', 'formatISO(result.start, tokyo)'],
  };
  failures.forEach(([file, title, expected, received], i) => {
    const suite = file.split('/').pop().replace('.test.ts', '');
    const [call, actual] = CALLS[suite];
    const line = 30 + Math.floor(r() * 120);
    const rounding = suite !== 'period';
    out.push(
      ` FAIL  ${file} > ${suite} > ${title}`,
      `AssertionError: expected '${received}' to be '${expected}' // Object.is equality`,
      '',
      '- Expected',
      '+ Received',
      '',
      `- ${expected}`,
      `+ ${received}`,
      '',
      ` ❯ ${file}:${line + 1}:${actual.length + 12}`,
      `    ${line}|     const result = ${call};`,
      `    ${line + 1}|     expect(${actual}).toBe('${expected}');`,
      `       |${' '.repeat(actual.length + 13)}^`,
      ...(rounding
        ? [' ❯ node_modules/@acme/money/dist/round.js:88:12', ' ❯ node_modules/@acme/money/dist/money.js:214:19']
        : [' ❯ src/billing/dates.ts:41:10']),
      '',
      '⎯'.repeat(60) + `[${i + 1}/${failures.length}]⎯`,
      '',
    );
  });
  out.push(
    ` Test Files  ${new Set(failures.map((f) => f[0])).size} failed | ${Object.keys(SUITES).length - new Set(failures.map((f) => f[0])).size} passed (${Object.keys(SUITES).length})`,
    `      Tests  ${failed} failed | ${passed} passed (${failed + passed})`,
    '   Start at  09:14:07',
    '   Duration  6.42s (transform 812ms, setup 0ms, collect 2.31s, tests 1.87s, environment 2ms, prepare 1.02s)',
    '',
    'npm error Lifecycle script `test` failed with error:',
    'npm error code 1',
  );
  return out.join('\n');
}

/** The output of `list_ci_runs`: a JSON array of 40 runs, newest first. */
function ciRuns() {
  const r = rng(77);
  const authors = ['mika.sato', 'j.okafor', 'lena.w', 'renovate[bot]', 'p.novak'];
  const runs = [];
  let t = Date.UTC(2026, 1, 27, 9, 14);
  for (let i = 0; i < 40; i++) {
    const bump = i === 3;
    const after = i <= 3;
    runs.push({
      id: 9_812_340 - i * 7,
      run_number: 4812 - i,
      branch: 'main',
      event: i % 5 === 0 ? 'schedule' : 'push',
      status: 'completed',
      conclusion: after ? 'failure' : r() < 0.06 ? 'cancelled' : 'success',
      commit: { sha: Math.floor(r() * 0xfffffff).toString(16).padStart(7, '0'), author: bump ? 'renovate[bot]' : authors[Math.floor(r() * authors.length)], message: bump ? 'chore(deps): update @acme/money to v3.0.0' : ['fix: typo in invoice footer', 'feat(api): usage export', 'refactor: extract tax rules', 'test: cover leap years', 'docs: webhook retries'][Math.floor(r() * 5)] },
      started_at: new Date(t).toISOString(),
      duration_s: 180 + Math.floor(r() * 120),
      failed_jobs: after ? ['test (20.x)', 'test (22.x)'] : [],
    });
    t -= (2 + Math.floor(r() * 10)) * 3_600_000;
  }
  return JSON.stringify(runs, null, 2);
}

const PERIOD_TS = `import { Money, round } from '@acme/money';
import { addMonths, differenceInCalendarDays, startOfDay } from './dates';
import type { Change, Subscription } from './types';

/** Bounds of the billing period that contains \`at\`, in the tenant's time zone. */
export function periodBounds(sub: Subscription, at: Date): { start: Date; end: Date } {
  const anchor = sub.anchorDay;
  let start = startOfDay(at, sub.tenant.timeZone);
  while (start.getUTCDate() !== Math.min(anchor, daysInMonth(start))) {
    start = new Date(start.getTime() - 86_400_000);
  }
  return { start, end: addMonths(start, sub.interval === 'year' ? 12 : 1) };
}

/** The prorated amount of a plan change, per line item, rounded like the invoice. */
export function prorate(sub: Subscription, change: Change): { lines: Money[]; total: Money } {
  const { start, end } = periodBounds(sub, change.at);
  const days = differenceInCalendarDays(end, start);
  const left = differenceInCalendarDays(end, change.at);
  const lines = change.items.map((item) => {
    const delta = item.newPrice.minus(item.oldPrice).times(item.quantity);
    // @acme/money 2.x rounded half up by default; the invoice relies on that.
    return round(delta.times(left).dividedBy(days), 2);
  });
  return { lines, total: lines.reduce((a, b) => a.plus(b), Money.zero(sub.currency)) };
}

function daysInMonth(d: Date): number {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
}
`;

const REPORT_PDF_TEXT = `CI Failure Report — ledger-api — run #4812
Generated 2026-02-27 09:21 UTC by the build bot

Summary
  Branch: main    Commit: 3f9c2ad (chore(deps): update @acme/money to v3.0.0)
  Result: FAILED — 5 of 160 tests failed in 3 files (test (20.x), test (22.x))
  First failing run: #4809 (the dependency update). Last green run: #4808.

Failed tests
  1. billing/proration > prorates an upgrade mid-cycle — expected 1245.50, received 1245.49
  2. billing/proration > prorates a downgrade mid-cycle — expected -312.25, received -312.24
  3. billing/proration > splits a 31-day month evenly — expected 96.78, received 96.77
  4. tax/vat > rounds VAT per line (DE) — expected 19.05, received 19.04
  5. billing/period > rolls over at midnight in the tenant time zone — expected 2026-03-01T00:00:00+09:00

Environment
  Node 20.11.1 and 22.3.0 on ubuntu-24.04; npm 10.5; TZ=UTC
  Lockfile changes: @acme/money 2.7.3 → 3.0.0 (major), decimal.js-light 2.5.1 (unchanged)

Flakiness
  None of the failing tests failed in the last 200 runs before #4809.

Owners
  billing/* — @payments-team      tax/* — @finance-eng`;

const MONEY_CHANGELOG = `# @acme/money changelog

## 3.0.0

### Breaking changes
- \`round(value, places)\` now uses banker's rounding (round half to even) by default, as
  required by the accounting guidelines. Pass \`{ mode: 'half-up' }\` for the previous behaviour.
- \`Money#toFixed\` no longer accepts a rounding mode; round first.
- Dropped support for Node 16.

### Features
- \`round(value, places, { mode })\` with modes 'half-even' (default), 'half-up', 'down', 'up'.
- \`Money.sum(list)\` sums without intermediate rounding.

## 2.7.3
- Fix: \`Money.zero('JPY')\` had two minor digits.`;

export const messages = [
  {
    role: 'system',
    content:
      'You are a senior engineer pairing with the user inside the repository acme/ledger-api (TypeScript, Node 20, vitest). ' +
      'Use the tools to read code and run tests before answering; never guess file contents. Prefer the smallest fix that ' +
      'makes the failing tests pass without changing their expectations, and explain the root cause in two or three sentences. ' +
      'Answer in the language the user writes in.',
  },
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text:
          "CI on main has been red since this morning's dependency update. `npm run build` passes, but `npm test` fails " +
          'with off-by-one-cent amounts in the billing tests. The CI bot produced the report below, and I attached the ' +
          'changelog of the package that was updated. Can you find out what broke?\n\n' +
          `<attachment name="report.pdf" type="application/pdf">\n${REPORT_PDF_TEXT}\n</attachment>`,
      },
      { type: 'file', file: { filename: 'money-CHANGELOG.md', text: MONEY_CHANGELOG } },
    ],
  },
  {
    role: 'assistant',
    content: 'I will read the proration code and run the billing and tax tests at the same time.',
    tool_calls: [
      { id: 'call_rf_01', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: 'src/billing/period.ts' }) } },
      { id: 'call_rt_02', type: 'function', function: { name: 'run_tests', arguments: JSON.stringify({ pattern: 'src/', reporter: 'verbose' }) } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_rf_01', content: PERIOD_TS },
  { role: 'tool', tool_call_id: 'call_rt_02', content: testLog() },
  {
    role: 'assistant',
    content: 'Four of the five failures are one cent low, which points at rounding. Let me check when the failures started.',
    tool_calls: [
      { id: 'call_ci_03', type: 'function', function: { name: 'list_ci_runs', arguments: JSON.stringify({ branch: 'main', limit: 40, status: 'any' }) } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_ci_03', content: ciRuns() },
  {
    role: 'assistant',
    content:
      'The failures start exactly at run #4809, the update of `@acme/money` to 3.0.0. Its changelog says `round()` now ' +
      "uses banker's rounding by default, so a half cent such as 1245.495 rounds to 1245.49 instead of 1245.50.\n\n" +
      "The smallest fix keeps the invoice behaviour: pass the old mode explicitly in `prorate()` and in the VAT rounding:\n\n" +
      "```ts\nreturn round(delta.times(left).dividedBy(days), 2, { mode: 'half-up' });\n```\n\n" +
      'The time-zone failure in `period.test.ts` looks unrelated to rounding; I would look at it separately.',
  },
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text:
          'ありがとうございます！丸めモードを指定したら、按分と VAT のテストは通りました。' +
          'ただ、スクリーンショットのとおり、タイムゾーンのテストがまだ 1 件失敗しています。' +
          '東京のテナントで月末の 0 時をまたぐケースです。原因と直し方を教えてください。',
      },
      { type: 'image_url', image_url: { url: CI_SCREENSHOT, detail: 'auto' } },
    ],
  },
];

/** The sample as the page loads it. */
export const sample = { format: 'openai', model: 'gpt-4o', messages, tools };
