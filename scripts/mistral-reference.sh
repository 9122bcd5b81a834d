#!/usr/bin/env bash
# Regenerates tests/tokens/mistral_reference.json from the `sentencepiece` package (PyPI, in a
# venv under target/, made once) on Mistral's SentencePiece models, which scripts/fetch-vocabs.sh
# fetches from the mistral-common wheel. Not part of make test: the committed reference is what
# tests/tokens/vocab_spm.rs checks. See docs/vocabularies.md.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/pyref
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check sentencepiece==0.2.1
scripts/fetch-vocabs.sh >/dev/null
"$venv/bin/python" scripts/mistral-reference.py
