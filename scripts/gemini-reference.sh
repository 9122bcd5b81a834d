#!/usr/bin/env bash
# Regenerates tests/gemini/reference.json from Google's own tokenizer: the `sentencepiece` and
# `google-genai` packages from PyPI, in a venv under target/ (made once), on the pinned model
# (scripts/fetch-gemma3-model.sh). Not part of make test: the committed reference is what
# tests/gemini/reference.rs checks. sentencepiece 0.2.1: google-genai 3.6.1's compute_tokens calls
# EncodeAsImmutableProto, which 0.2.3 no longer has. See docs/gemini-tokenizer.md.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/pyref
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check sentencepiece==0.2.1 google-genai==3.6.1
scripts/fetch-gemma3-model.sh >/dev/null
"$venv/bin/python" scripts/gemini-reference.py
