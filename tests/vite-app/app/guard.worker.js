// The whole worker: ctxguard serves the main thread's createWorkerGuard().
import 'ctxguard/worker/serve';
