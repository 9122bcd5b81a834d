#!/usr/bin/env bash
# Builds the npm package `ctxguard` into pkg/: wasm-pack's web-target output, then the
# hand-written entries and types from src/js/ (see scripts/finish-pkg.mjs).
#
# Three builds of the crate: pkg/ with both vocabularies (`ctxguard`), and pkg/o200k/ and
# pkg/cl100k/ with one each (`ctxguard/o200k`, `ctxguard/cl100k`), for pages that need one
# encoding and should download only it. CTXGUARD_VARIANTS=0 skips the single-encoding builds
# (a faster local build; the package is then incomplete).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

rm -rf pkg
# wasm-opt stays off (Cargo.toml metadata): wasm-pack would otherwise fetch binaryen from the net.
flags=(--release --target web --out-name ctxguard_wasm --no-pack --no-typescript --no-gitignore --no-opt)
wasm-pack build "${flags[@]}" --out-dir pkg
if [ "${CTXGUARD_VARIANTS:-1}" != 0 ]; then
  for enc in o200k cl100k; do
    wasm-pack build "${flags[@]}" --out-dir "pkg/$enc" -- --no-default-features --features "$enc"
  done
fi
node scripts/finish-pkg.mjs
