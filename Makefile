# ctxguard: build, package and test the Rust → WebAssembly → npm package.
#   make demo   install what is missing, build pkg/, serve the demo page on http://127.0.0.1:8080/
#   make test   install what is missing, run every test (native, wasm in Node and Chromium, JS, TS, browser)
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
PORT ?= 8080

.PHONY: setup build test demo serve bench fuzz clean

setup:
	scripts/setup.sh

build: setup
	scripts/build-pkg.sh

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

fuzz:
	@echo "fuzzing is not set up yet (planned: cargo fuzz targets for the parsers and the pipeline)"

clean:
	rm -rf target pkg node_modules
