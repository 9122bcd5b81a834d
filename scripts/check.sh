#!/usr/bin/env bash
# The inner loop (`make check`): the format, clippy, the library's unit tests with the fast test
# binaries, and the JS tests against the pkg/ already built. A few minutes with a warm target/;
# `make test` runs everything (the tokenizer and property binaries, wasm, browsers, a fresh pkg/).
# Runs every step, then prints a summary with a time per step; fails if any step failed.
set -uo pipefail

cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

summary=()
failed=0
t_all=$SECONDS

step() {
  local name=$1
  shift
  printf '\n==================== %s ====================\n$ %s\n' "$name" "$*"
  local t0=$SECONDS
  if "$@"; then
    summary+=("$(printf '%-30s ok    %4ds' "$name" "$((SECONDS - t0))")")
  else
    summary+=("$(printf '%-30s FAIL  %4ds' "$name" "$((SECONDS - t0))")")
    failed=1
  fi
}

step "cargo fmt --check" cargo fmt --check
step "cargo clippy (native)" cargo clippy --all-targets -- -D warnings
# The unit tests and the fast binaries; `tokens` (against tiktoken-rs) and `props` (proptest) take
# minutes in a debug build: run them when you touch src/tokens/ or the pipeline, make test does.
step "cargo test (lib core house gemini)" cargo test --lib --test core --test house --test gemini

if [ ! -f pkg/package.json ] || [ ! -e node_modules/ctxguard ]; then
  summary+=("$(printf '%-30s SKIP         no pkg/ (make build) or no node_modules/ (make setup)' "node --test tests/js")")
else
  # Against the package as last built: a change to src/ reaches these tests after `make build`.
  newer=$(find src -newer pkg/package.json -type f | head -1)
  [ -n "$newer" ] && echo "note: pkg/ is older than $newer; the JS tests run against the last build (make build)"
  # Most of a JS test's time is waiting (workers, child processes, timers): run files 4 at a time.
  step "node --test tests/js" node --test --test-timeout=180000 --test-concurrency=4 --test-reporter=dot tests/js/
fi

printf '\n==================== check summary (%ds) ====================\n' "$((SECONDS - t_all))"
printf '%s\n' "${summary[@]}"
exit "$failed"
