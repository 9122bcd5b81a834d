// A worker where WebAssembly is switched off: ctxguard must say so to the main thread.
delete globalThis.WebAssembly;
await import('/pkg/worker-serve.js');
