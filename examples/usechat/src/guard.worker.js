// The whole worker: ctxguard counts and guards here, off the UI thread.
import 'ctxguard/worker/serve';
