#!/usr/bin/env bash
# Builds the npm package `ctxguard` into pkg/: wasm-pack's web-target output, then the
# hand-written entries and types from src/js/ (see scripts/finish-pkg.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

rm -rf pkg
# wasm-opt stays off (Cargo.toml metadata): wasm-pack would otherwise fetch binaryen from the net.
wasm-pack build --release --target web --out-dir pkg --out-name ctxguard_wasm \
  --no-pack --no-typescript --no-gitignore --no-opt
node scripts/finish-pkg.mjs
