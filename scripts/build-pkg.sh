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
# wasm-pack's own wasm-opt step stays off (Cargo.toml metadata): it would fetch binaryen from the
# net. wasm-opt runs below instead.
flags=(--release --target web --out-name ctxguard_wasm --no-pack --no-typescript --no-gitignore --no-opt)
wasm-pack build "${flags[@]}" --out-dir pkg
if [ "${CTXGUARD_VARIANTS:-1}" != 0 ]; then
  for enc in o200k cl100k; do
    wasm-pack build "${flags[@]}" --out-dir "pkg/$enc" -- --no-default-features --features "$enc"
  done
fi
# wasm-opt from the npm package binaryen (a dev dependency; see ../shared/TOOLCHAIN.md for why not
# Debian's or wasm-pack's): -O3 on what LLVM already optimized takes ~210 KB raw and ~24 KB gzip
# off the o200k build at the same throughput (BENCHMARKS.md). The features are the ones rustc
# enables for wasm32 by default; wasm-opt rejects a module that uses one not listed.
opt=node_modules/.bin/wasm-opt
[ -x "$opt" ] || { echo "build-pkg: $opt is missing; run scripts/setup.sh (npm ci)" >&2; exit 1; }
for dir in pkg pkg/o200k pkg/cl100k; do
  [ -f "$dir/ctxguard_wasm_bg.wasm" ] || continue
  "$opt" -O3 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$dir/ctxguard_wasm_bg.wasm" -o "$dir/ctxguard_wasm_bg.opt.wasm"
  mv "$dir/ctxguard_wasm_bg.opt.wasm" "$dir/ctxguard_wasm_bg.wasm"
done
node scripts/finish-pkg.mjs
