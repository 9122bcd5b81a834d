# ctxguard: build, package and test the Rust → WebAssembly → npm package.
#   make demo   install what is missing, build pkg/ (unless up to date), serve the demo on http://127.0.0.1:8080/
#   make check  the inner loop: format, clippy, unit tests and the fast test binaries, JS tests on pkg/
#   make test   install what is missing, run every test (native, wasm in Node, Chromium and Firefox, JS, TS, browser)
#   make soak   the long-session memory benchmark (not part of make test)
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
PORT ?= 8080

.PHONY: setup build check test demo serve bench bench-builds soak fuzz clean

setup:
	scripts/setup.sh

build: setup
	scripts/build-pkg.sh

# A few minutes with a warm target/ (scripts/check.sh); nothing is installed or rebuilt but the
# crate. The JS tests run against the pkg/ already built, and are skipped without one.
check:
	scripts/check.sh

# scripts/test.sh builds pkg/ itself (after the native and wasm-bindgen tests).
test: setup
	scripts/test.sh

demo: build
	PORT=$(PORT) node scripts/serve.mjs

# Serve whatever pkg/ and www/ hold now, without rebuilding.
serve:
	PORT=$(PORT) node scripts/serve.mjs

bench: build
	@if [ -f benches/run.mjs ]; then node benches/run.mjs; else echo "no benches/run.mjs yet"; fi

# Every build of the package (both vocabularies, one each, counting only) against gpt-tokenizer:
# download, cold start, memory, prose throughput; prints a table for BENCHMARKS.md.
bench-builds: build
	node benches/builds.mjs

# Soak: 1,000 turns in Node and headless Chromium, memory sampled every 25 turns; rewrites the
# "Long sessions (soak)" section of BENCHMARKS.md (SOAK_ARGS=--quick: 200 turns, no write).
SOAK_ARGS ?=
soak: build
	node benches/soak.mjs $(SOAK_ARGS)

# cargo-fuzz on stable Rust (RUSTC_BOOTSTRAP=1 unlocks the nightly flags it needs); each target
# runs FUZZ_SECONDS (default 60) from its corpus in tests/fuzz/corpus/; crashes land in
# tests/fuzz/artifacts/<target>/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= adapters tool_output attachment reader pipeline
fuzz:
	@export PATH="$$HOME/.cargo/bin:$$PATH"; \
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked; \
	for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t for $(FUZZ_SECONDS)s"; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir tests/fuzz -O $$t tests/fuzz/corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 || exit 1; \
	done

clean:
	rm -rf target pkg node_modules
