// The two browsers the page tests run in, behind one small page API:
//   - Chromium: Debian's chromium driven by playwright-core (chromium.mjs: flags, fresh profile);
//   - Firefox: Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi, which stock
//     Firefox speaks natively (playwright-core drives only Playwright's own patched Firefox
//     build, which these machines cannot download), in a fresh profile.
// `launch(name, { viewport })` gives `{ name, newPage(), close() }`; a page has goto, evaluate,
// waitForFunction(fn, arg, { timeout }), fill, press, click, reload, screenshot(path, { fullPage }),
// on/off (`request` includes workers' requests), close, and `problems` (page errors, console
// errors and warnings).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from './chromium.mjs';

export const BROWSERS = (process.env.CTXGUARD_BROWSERS ?? 'chromium,firefox').split(',').filter(Boolean);
export const FIREFOX = process.env.FIREFOX ?? '/usr/bin/firefox-esr';

function watch(page, on) {
  page.problems = [];
  on('pageerror', (e) => page.problems.push(`pageerror: ${e.message ?? e}`));
  on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning' || m.type() === 'warn') page.problems.push(`console.${m.type()}: ${m.text()}`);
  });
}

async function chromiumBrowser(options) {
  const { context, close } = await launchChromium(options);
  return {
    name: 'chromium',
    async newPage() {
      const p = await context.newPage();
      const page = {
        raw: p,
        goto: (url) => p.goto(url),
        evaluate: (fn, arg) => p.evaluate(fn, arg),
        waitForFunction: (fn, arg, { timeout = 30_000 } = {}) => p.waitForFunction(fn, arg, { timeout }),
        fill: (sel, text) => p.fill(sel, text),
        press: (sel, key) => p.press(sel, key),
        click: (sel) => p.click(sel),
        reload: () => p.reload(),
        screenshot: (path, { fullPage = false } = {}) => p.screenshot({ path, fullPage }),
        // Requests of the page and of its workers.
        on: (ev, f) => (ev === 'request' ? context.on(ev, f) : p.on(ev, f)),
        off: (ev, f) => (ev === 'request' ? context.off(ev, f) : p.off(ev, f)),
        close: () => p.close(),
      };
      watch(page, (ev, f) => p.on(ev, f));
      return page;
    },
    close,
  };
}

async function firefoxBrowser({ viewport } = {}) {
  const { default: puppeteer } = await import('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'ctxguard-firefox-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    userDataDir: profile,
    defaultViewport: viewport ?? { width: 800, height: 600 },
    // Nothing to fetch from outside: no updates, telemetry, captive-portal or safe-browsing calls.
    extraPrefsFirefox: {
      'app.update.enabled': false,
      'network.captive-portal-service.enabled': false,
      'network.connectivity-service.enabled': false,
      'browser.safebrowsing.malware.enabled': false,
      'browser.safebrowsing.phishing.enabled': false,
      'datareporting.policy.dataSubmissionEnabled': false,
      'toolkit.telemetry.enabled': false,
    },
  });
  return {
    name: 'firefox',
    async newPage() {
      const p = await browser.newPage();
      const page = {
        raw: p,
        goto: (url) => p.goto(url),
        evaluate: (fn, arg) => p.evaluate(fn, arg),
        waitForFunction: (fn, arg, { timeout = 30_000 } = {}) => p.waitForFunction(fn, { timeout, polling: 50 }, arg),
        // Typed key by key: puppeteer's `fill` sets a long value from script, which React's
        // controlled inputs do not see (React tracks the value a script set as its own).
        fill: async (sel, text) => {
          await p.click(sel, { count: 3 });
          await p.keyboard.press('Backspace');
          await p.type(sel, text);
        },
        press: (sel, key) => p.focus(sel).then(() => p.keyboard.press(key)),
        click: (sel) => p.click(sel),
        reload: () => p.reload(),
        screenshot: (path, { fullPage = false } = {}) => p.screenshot({ path, fullPage }),
        on: (ev, f) => p.on(ev, f),
        off: (ev, f) => p.off(ev, f),
        close: () => p.close(),
      };
      watch(page, (ev, f) => p.on(ev, f));
      return page;
    },
    close: async () => {
      await browser.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** `options.viewport`: `{ width, height }`. */
export function launch(name, options = {}) {
  if (name === 'chromium') return chromiumBrowser(options);
  if (name === 'firefox') return firefoxBrowser(options);
  throw new Error(`unknown browser ${name}`);
}
