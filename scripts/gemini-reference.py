"""Writes tests/gemini/reference.json: what Google's own tokenizer gives for every text of
tests/gemini/corpus.json, for the generated inputs below, and for a few structured requests.

Run by scripts/gemini-reference.sh (which makes the venv and fetches the model); see
docs/gemini-tokenizer.md. Two references, which must agree before anything is written:
- the `sentencepiece` package on the pinned model: `encode(text)` ids;
- google-genai's `LocalTokenizer` (the SDK's own local counter), with the model put in its cache
  so that it does not download: `count_tokens` totals and `compute_tokens` ids.
The Rust side (tests/gemini/reference.rs) regenerates the generated inputs with the same SplitMix64
and compares ids through a 64-bit FNV-1a hash of the id sequence, full ids where they are short.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile

import sentencepiece as spm

from reference_ids import FULL_IDS_MAX, M64, fnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "target/gemma3/gemma3_cleaned_262144_v2.spiece.model")
SHA256 = "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c"
URL = ("https://raw.githubusercontent.com/google/gemma_pytorch/014acb7ac4563a5f77c76d7ff98f31b568c16508/"
       "tokenizer/gemma3_cleaned_262144_v2.spiece.model")


class SplitMix:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
BASE64 = LETTERS + [str(d) for d in range(10)] + ["+", "/"]
FUZZ = ["a", "b", "e", "t", "h", "o", "n", " ", "  ", "   ", "\n", "\n\n", "\t", "\r", "\u2581", "中", "文",
        "語", "😀", "👍🏽", "1", "2", "9", ".", ",", "!", "<", ">", "/", "td", "</", "start_of_turn",
        "é", "\u0301", "ab", "the", " the", "ing", "Ω", "\u0000", "\u200d", "\ufeff", "ﬁ", "𝔘", "'", '"']

# Generated inputs: (name, recipe). Recipes: repeat (unit × times), random (count picks from an
# alphabet, concatenated), fuzz (n strings of 1..max picks each; counts per string, one hash).
GENERATED = [
    ("repeat-a-1m", {"kind": "repeat", "unit": "a", "times": 1_000_000}),
    ("repeat-space-100k", {"kind": "repeat", "unit": " ", "times": 100_000}),
    ("repeat-newline-100k", {"kind": "repeat", "unit": "\n", "times": 100_000}),
    ("repeat-tab-100k", {"kind": "repeat", "unit": "\t", "times": 100_000}),
    ("repeat-mark-50k", {"kind": "repeat", "unit": "\u2581", "times": 50_000}),
    ("repeat-td-20k", {"kind": "repeat", "unit": "<td>", "times": 20_000}),
    ("repeat-cjk-100k", {"kind": "repeat", "unit": "中", "times": 100_000}),
    ("repeat-emoji-50k", {"kind": "repeat", "unit": "😀", "times": 50_000}),
    ("repeat-ab-space-100k", {"kind": "repeat", "unit": "ab ", "times": 100_000}),
    ("random-letters-1m", {"kind": "random", "seed": 1, "alphabet": LETTERS, "count": 1_000_000}),
    ("random-base64-1m", {"kind": "random", "seed": 2, "alphabet": BASE64, "count": 1_000_000}),
    ("random-mixed-200k", {"kind": "random", "seed": 3, "alphabet": FUZZ, "count": 200_000}),
    ("fuzz-3000", {"kind": "fuzz", "seed": 4, "alphabet": FUZZ, "n": 3000, "max": 24}),
]


def generate(recipe):
    if recipe["kind"] == "repeat":
        return [recipe["unit"] * recipe["times"]]
    rng = SplitMix(recipe["seed"])
    alphabet = recipe["alphabet"]
    if recipe["kind"] == "random":
        return ["".join(alphabet[rng.below(len(alphabet))] for _ in range(recipe["count"]))]
    out = []
    for _ in range(recipe["n"]):
        k = 1 + rng.below(recipe["max"])
        out.append("".join(alphabet[rng.below(len(alphabet))] for _ in range(k)))
    return out


# Structured requests in google-genai's shapes; tests/gemini/reference.rs builds the same ones in
# ctxguard's message model and expects these totals.
WEATHER_ARGS = {"city": "Paris", "days": 3, "units": ["c", "f"], "opts": {"detail": True, "lang": "fr"}, "note": None}
WEATHER_RESPONSE = {"temp": 21.5, "summary": "Sunny and warm", "hourly": [{"t": "09:00", "sky": "clear"}]}
WEATHER_TOOL = {
    "function_declarations": [{
        "name": "get_weather",
        "description": "Gets the weather for a city",
        "parameters": {
            "type": "OBJECT",
            "title": "Weather query",
            "properties": {
                "city": {"type": "STRING", "description": "City name", "example": "Paris"},
                "units": {"type": "STRING", "enum": ["celsius", "fahrenheit"], "format": "enum"},
                "days": {"type": "INTEGER", "default": 1},
                "tags": {"type": "ARRAY", "items": {"type": "STRING", "description": "A tag"}},
            },
            "required": ["city"],
        },
    }]
}
REQUESTS = [
    ("user-text", [{"role": "user", "parts": [{"text": "What's the weather in Paris?"}]}], {}),
    ("two-parts", [{"role": "user", "parts": [{"text": "First part."}, {"text": " Second part\n"}]}], {}),
    ("system", [{"role": "user", "parts": [{"text": "Hi"}]}], {"system_instruction": "You are terse. Answer in French."}),
    ("function-call", [{"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": WEATHER_ARGS}}]}], {}),
    ("function-response", [{"role": "user", "parts": [{"function_response": {"name": "get_weather", "response": WEATHER_RESPONSE}}]}], {}),
    ("tools", [{"role": "user", "parts": [{"text": "Weather?"}]}], {"tools": [WEATHER_TOOL]}),
    ("conversation", [
        {"role": "user", "parts": [{"text": "What's the weather in Paris?"}]},
        {"role": "model", "parts": [{"text": "Let me check."}, {"function_call": {"name": "get_weather", "args": WEATHER_ARGS}}]},
        {"role": "user", "parts": [{"function_response": {"name": "get_weather", "response": WEATHER_RESPONSE}}]},
        {"role": "model", "parts": [{"text": "It is sunny, 21.5 °C."}]},
    ], {"system_instruction": "You are terse. Answer in French.", "tools": [WEATHER_TOOL]}),
]


def main():
    with open(MODEL, "rb") as f:
        model = f.read()
    if hashlib.sha256(model).hexdigest() != SHA256:
        sys.exit(f"{MODEL} is not the pinned model")
    # google-genai's loader cache: <tmp>/vertexai_tokenizer_model/<sha1 of the url>.
    cache = os.path.join(tempfile.gettempdir(), "vertexai_tokenizer_model")
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(MODEL, os.path.join(cache, hashlib.sha1(URL.encode()).hexdigest()))

    from google.genai import local_tokenizer, types
    import google.genai

    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model)
    genai = local_tokenizer.LocalTokenizer(model_name="gemini-2.5-pro")

    def check(text):
        ids = sp.encode(text)
        total = genai.count_tokens(text).total_tokens
        if total != len(ids):
            sys.exit(f"LocalTokenizer counts {total}, sentencepiece {len(ids)}: {text[:60]!r}")
        if text and len(text) < 200_000:
            got = [i for info in genai.compute_tokens(text).tokens_info for i in info.token_ids]
            if got != ids:
                sys.exit(f"LocalTokenizer ids differ from sentencepiece: {text[:60]!r}")
        return ids

    def entry(name, texts, **extra):
        ids = [check(t) for t in texts]
        e = {"name": name, **extra}
        if len(texts) == 1:
            e["count"] = len(ids[0])
            e["fnv"] = fnv(ids[0])
            if len(ids[0]) <= FULL_IDS_MAX:
                e["ids"] = ids[0]
        else:
            e["counts"] = [len(i) for i in ids]
            e["fnv"] = fnv([x for i in ids for x in i + [0xFFFFFFFF]])
        return e

    with open(os.path.join(ROOT, "tests/gemini/corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    out = {
        "model_sha256": SHA256,
        "sentencepiece": spm.__version__,
        "google_genai": google.genai.__version__,
        "corpus": [entry(item["name"], [item["text"]]) for item in corpus],
        "generated": [entry(name, generate(r), recipe=r) for name, r in GENERATED],
        "requests": [],
    }
    for name, contents, config in REQUESTS:
        total = genai.count_tokens(contents, config=types.CountTokensConfig(**config) if config else None).total_tokens
        out["requests"].append({"name": name, "total": total})
    path = os.path.join(ROOT, "tests/gemini/reference.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        keys = list(out)
        for k in keys:
            v = out[k]
            if isinstance(v, list):
                f.write(f'"{k}": [\n' + ",\n".join(json.dumps(x, ensure_ascii=False) for x in v) + "\n]")
            else:
                f.write(f'"{k}": {json.dumps(v)}')
            f.write(",\n" if k != keys[-1] else "\n")
        f.write("}\n")
    print(f"wrote {path}: {len(out['corpus'])} corpus texts, {len(out['generated'])} generated inputs, "
          f"{len(out['requests'])} requests")


if __name__ == "__main__":
    main()
