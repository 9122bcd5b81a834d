// Headless Chromium for the browser tests: Debian's chromium driven by playwright-core, with the
// flags it needs here (root needs --no-sandbox; the networking flags stop Chromium from trying
// to reach hosts this machine cannot reach), in a fresh profile removed on close.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

/** A persistent context in a fresh profile; `close()` closes it and removes the profile. */
export async function launchChromium(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'ctxguard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    ...options,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A new page whose page errors, console errors/warnings and failed requests are collected in `page.problems`. */
export async function watchedPage(context) {
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') page.problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  return page;
}
