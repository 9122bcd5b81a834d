// A tiny static server on 127.0.0.1 for the Chromium half of the benchmark. It serves:
//   /bundles/... every library bundled and minified as a production page ships it (bundle.mjs:
//                one ES module per library and encoding, its .wasm next to it where it has one)
//   /lib/...     this harness
//   /inputs/...  the generated inputs
//   /bench.html, /cold.html  the pages
// Every response is logged, so that the download size of a page can be read off what it fetched.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const MIME = {
  '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json',
  '.html': 'text/html; charset=utf-8', '.txt': 'text/plain; charset=utf-8',
};

function page(title, body) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title>
</head><body>
${body}
</body></html>
`;
}

/** Starts the server. `dirs` = { bundles, lib, inputs }. Resolves to { url, log, close() }. */
export async function startServer({ dirs }) {
  const log = [];
  const generated = {
    '/bench.html': {
      type: MIME['.html'],
      body: page('ctxguard bench', `<script type="module">
import * as harness from '/lib/browser-harness.mjs';
window.harness = harness;
window.harnessReady = true;
</script>`),
    },
  };
  const mounts = { '/bundles/': dirs.bundles, '/lib/': dirs.lib, '/inputs/': dirs.inputs };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const p = decodeURIComponent(url.pathname);
    const headers = {
      'Cache-Control': 'no-store',
      // Cross-origin isolation: finer performance.now() and measureUserAgentSpecificMemory().
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
    };
    const send = (status, type, body, file) => {
      log.push({ path: p, status, bytes: body.length, file });
      res.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': body.length });
      res.end(body);
    };
    if (p === '/cold.html') {
      const lib = url.searchParams.get('lib');
      const enc = url.searchParams.get('enc');
      const env = url.searchParams.get('env');
      // Timed as in Node: from the library's import to after its first count (the target's
      // "import + first count"). The harness's own two modules are loaded before the clock
      // starts (their time, the same for every library, is kept as `harnessMs`), and the time
      // since navigation start is kept too.
      const body = page('cold start', `<script type="module">
const h0 = performance.now();
const { loadCounter } = await import('/lib/adapters.mjs');
const { SAMPLE } = await import('/lib/measure.mjs');
const t0 = performance.now();
try {
  const c = await loadCounter(${JSON.stringify(lib)}, ${JSON.stringify(enc)}, ${env});
  const n = c.count(SAMPLE);
  const end = performance.now();
  window.coldResult = { ms: end - t0, harnessMs: t0 - h0, sinceNavigation: end, count: n };
} catch (e) {
  window.coldResult = { error: String(e && e.stack || e) };
}
</script>`);
      return send(200, MIME['.html'], Buffer.from(body));
    }
    const g = generated[p];
    if (g) return send(200, g.type, Buffer.from(g.body), g.file);
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (!p.startsWith(prefix)) continue;
      const file = path.join(dir, p.slice(prefix.length));
      if (!file.startsWith(dir + path.sep)) break;
      let body;
      try {
        body = fs.readFileSync(file);
      } catch {
        break;
      }
      return send(200, MIME[path.extname(file)] ?? 'application/octet-stream', body, file);
    }
    return send(404, 'text/plain', Buffer.from('not found'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    generated,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
