// A worker that never imports ctxguard/worker/serve.
setInterval(() => {}, 1000);
