#!/usr/bin/env node
// A tiny static server for the demo and the browser tests, with no dependencies.
//   node scripts/serve.mjs            serves www/ at / and pkg/ at /pkg/ on http://127.0.0.1:8080/
//   PORT=9000 node scripts/serve.mjs  another port (PORT=0 picks a free one)
// Tests import { startServer } and mount their own folders.
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** The default mounts: URL prefix (ending in '/') → folder. */
export const defaultMounts = { '/pkg/': join(root, 'pkg'), '/': join(root, 'www') };

function send(res, status, text, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(`${text}\n`);
}

/** The file a URL path maps to, or null when it is outside every mount (or not a valid path). */
async function locate(mounts, urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path.includes('\0') || path.includes('\\')) return null;
  // Longest prefix first, so '/pkg/' wins over '/'.
  const prefix = Object.keys(mounts)
    .sort((a, b) => b.length - a.length)
    .find((p) => path.startsWith(p));
  if (prefix === undefined) return null;
  let base;
  try {
    base = await realpath(mounts[prefix]);
  } catch {
    return null;
  }
  let file = resolve(base, `.${sep}${path.slice(prefix.length)}`);
  if (file !== base && !file.startsWith(base + sep)) return null;
  try {
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    // Symlinks must not lead out of the mount either.
    const real = await realpath(file);
    if (real !== base && !real.startsWith(base + sep)) return null;
    if (!(await stat(real)).isFile()) return null;
    return real;
  } catch {
    return null;
  }
}

/**
 * Starts the server. Resolves to { server, url } once it listens.
 * @param {{ port?: number, host?: string, mounts?: Record<string, string>, quiet?: boolean }} options
 */
export function startServer({ port = 8080, host = '127.0.0.1', mounts = defaultMounts, quiet = false } = {}) {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
      return;
    }
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    // '/pkg' → '/pkg/' so that relative URLs inside a mounted folder resolve.
    if (!pathname.endsWith('/') && Object.hasOwn(mounts, `${pathname}/`)) {
      res.writeHead(301, { location: `${pathname}/` });
      res.end();
      return;
    }
    const file = await locate(mounts, pathname);
    if (file === null) {
      send(res, 404, 'not found');
      if (!quiet) console.log(`404 ${req.method} ${pathname}`);
      return;
    }
    const { size } = await stat(file);
    res.writeHead(200, {
      'content-type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': size,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolvePromise({ server, url: `http://${host}:${actual}/` });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number.parseInt(process.env.PORT ?? '8080', 10);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, not ${JSON.stringify(process.env.PORT)}`);
    process.exit(2);
  }
  for (const [prefix, folder] of Object.entries(defaultMounts)) {
    try {
      await stat(folder);
    } catch {
      console.warn(`warning: ${folder} does not exist yet; ${prefix} will answer 404`);
    }
  }
  const { url } = await startServer({ port });
  console.log(`ctxguard demo: ${url}  (www/ at /, pkg/ at /pkg/; Ctrl-C stops)`);
  process.on('SIGINT', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}
