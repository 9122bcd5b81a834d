// Where the harness runs: a Node child process or a Chromium page. Both answer `call(method, args,
// timeoutMs)`; a call that runs past its timeout kills what runs it (a tokenizer stuck in a
// quadratic merge cannot be interrupted from inside) and rejects with a TimeoutError.

import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB_DIR = path.dirname(fileURLToPath(import.meta.url));

export class TimeoutError extends Error {
  constructor(ms) {
    super(`timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

function withTimeout(promise, ms, onTimeout) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new TimeoutError(ms));
    }, ms);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

export class NodeWorker {
  static async start(inputsDir) {
    const w = new NodeWorker();
    w.child = fork(path.join(LIB_DIR, 'node-child.mjs'), [], {
      env: { ...process.env, CTXGUARD_BENCH_INPUTS: inputsDir },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    w.pending = new Map();
    w.nextId = 1;
    w.dead = false;
    const ready = new Promise((resolve, reject) => {
      w.child.once('error', reject);
      w.child.on('message', (msg) => {
        if (msg.ready) return resolve();
        const p = w.pending.get(msg.id);
        if (!p) return;
        w.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(new Error(msg.error));
      });
      w.child.once('exit', (code, signal) => {
        w.dead = true;
        for (const p of w.pending.values()) p.reject(new Error(`child exited (${code ?? signal})`));
        w.pending.clear();
        reject(new Error(`child exited before ready (${code ?? signal})`));
      });
    });
    await ready;
    return w;
  }

  call(method, args, timeoutMs) {
    if (this.dead) return Promise.reject(new Error('child is gone'));
    const id = this.nextId++;
    const p = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, method, args });
    });
    return withTimeout(p, timeoutMs, () => this.kill());
  }

  kill() {
    if (!this.dead) {
      this.dead = true;
      this.child.kill('SIGKILL');
    }
  }
}

/** Owns the Chromium process; relaunches it when a page had to be abandoned. */
export class Browser {
  constructor({ chromium, executablePath, args }) {
    Object.assign(this, { chromium, executablePath, args, browser: null });
  }

  async get() {
    if (!this.browser || !this.browser.isConnected()) {
      this.browser = await this.chromium.launch({ executablePath: this.executablePath, headless: true, args: this.args });
    }
    return this.browser;
  }

  async kill() {
    const b = this.browser;
    this.browser = null;
    if (b) {
      // close() terminates the process; a renderer busy in wasm goes with it.
      await Promise.race([b.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
    }
  }
}

export class PageWorker {
  /** Opens a fresh context and page on `url` and waits for the harness module to be loaded. */
  static async start(browser, url) {
    const w = new PageWorker();
    w.browser = browser;
    const b = await browser.get();
    w.context = await b.newContext();
    w.page = await w.context.newPage();
    w.errors = [];
    w.page.on('pageerror', (e) => w.errors.push(String(e)));
    w.page.on('console', (m) => {
      if (m.type() === 'error') w.errors.push(m.text());
    });
    await w.page.goto(url);
    try {
      await w.page.waitForFunction(() => window.harnessReady === true, null, { timeout: 60_000 });
    } catch (e) {
      throw new Error(`harness page did not load: ${e.message}; page errors: ${w.errors.join(' | ')}`);
    }
    return w;
  }

  call(method, args, timeoutMs) {
    const p = this.page.evaluate(([m, a]) => window.harness[m](...a), [method, args ?? []]);
    p.catch(() => {}); // rejected when the browser is killed after a timeout
    return withTimeout(p, timeoutMs, () => {
      this.dead = true;
      this.browser.kill();
    });
  }

  async kill() {
    if (this.dead) return;
    this.dead = true;
    await this.context.close().catch(() => {});
  }
}
