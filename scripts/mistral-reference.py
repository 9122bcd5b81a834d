"""Writes tests/tokens/mistral_reference.json: what the `sentencepiece` package gives on Mistral's
SentencePiece models (v3: Mistral Large 2407, Codestral 2405, Mixtral 8x22B; v7: Mistral Large
2411, Pixtral Large), fetched from the mistral-common wheel by scripts/fetch-vocabs.sh, for every
text of tests/gemini/corpus.json and for the edge cases below. mistral-common encodes a message's
text with `SentencePieceProcessor.encode(text)` (dummy prefix included), which is what is recorded.

Run by scripts/mistral-reference.sh; see docs/vocabularies.md. The Rust side
(tests/tokens/vocab_spm.rs) compares the ids through a 64-bit FNV-1a hash of the id sequence,
full ids where they are short.
"""

import hashlib
import json
import os

import sentencepiece as spm

from reference_ids import FULL_IDS_MAX, fnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {
    "mistral-spm-v3": ("mistral_instruct_tokenizer_240323.model.v3",
                   "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33"),
    "mistral-spm-v7": ("mistral_instruct_tokenizer_241114.model.v7",
                   "1b968b8dc352f42192367337c78ccc61e1eaddc6d641a579372d4f20694beb7a"),
}


EDGE = {
    "empty": "",
    "one-space": " ",
    "leading-spaces": "   indented text",
    "space-runs": "a" + " " * 15 + "b" + " " * 16 + "c" + " " * 17 + "d" + " " * 40 + "e",
    "only-spaces": " " * 100,
    "tabs-newlines": "line one\n\tline two\r\n\n\n  last",
    "escaped-space-char": "a\u2581b \u2581\u2581 c",
    "user-defined": "[REFERENCE_DOC_3] text [REF] x [/REF][REFERENCE_DOC_19]",
    "control-text": "<s>[INST] not special [/INST]</s>[SYSTEM_PROMPT][TOOL_CALLS]",
    "digits": "31415926535897932384626433832795028841971 0.5 1,000,000",
    "emoji": "family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽 🙂🙂🙂",
    "rtl": "مرحبا بالعالم — שלום עולם",
    "controls": "a\u0000b\u0001c\u007fd\u200be\ufeff",
    "cjk": "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
    "mixed-scripts": "Ünïcödé naïve café résumé Ελληνικά Русский हिन्दी ไทย",
    "code": "fn main() {\n    println!(\"{}\", x.iter().map(|y| y * 2).sum::<u32>());\n}\n",
    "json": "{\"role\":\"tool\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"n\":[1,2,3]}",
    "rare-chars": "\U0001F9EC \U00010348 \u2603 \u0fbe \U0002A6D6",
    "long-word": "a" * 300 + "b" * 5 + "ab" * 50,
    "space-run-5000": "x" + " " * 5000 + "y",
    "space-runs-mixed": "".join(" " * k + "w" for k in range(1, 40)),
    "newline-run": "\n" * 700 + "end",
    "cjk-run": "的" * 500 + "日本語" * 100,
    "emoji-run": "🙂" * 300,
    "base64": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw==" * 20,
}


def main():
    corpus = json.load(open(os.path.join(ROOT, "tests/gemini/corpus.json"), encoding="utf-8"))
    texts = [(c["name"], c["text"]) for c in corpus] + list(EDGE.items())
    out = {}
    for name, (file, sha) in MODELS.items():
        path = os.path.join(ROOT, "target/vocab-src/mistral-spm", file)
        data = open(path, "rb").read()
        assert hashlib.sha256(data).hexdigest() == sha, f"{file} is not the pinned model"
        sp = spm.SentencePieceProcessor(model_proto=data)
        cases = []
        for case, text in texts:
            ids = sp.encode(text)
            entry = {"name": case, "count": len(ids), "fnv": fnv(ids)}
            if len(ids) <= FULL_IDS_MAX:
                entry["ids"] = ids
            if case in EDGE:
                entry["text"] = text
            cases.append(entry)
        out[name] = {"model": file, "sha256": sha, "cases": cases}
    dest = os.path.join(ROOT, "tests/tokens/mistral_reference.json")
    # One case per line, so that a change shows as the cases it changes.
    with open(dest, "w", encoding="utf-8") as f:
        f.write("{\n")
        for k, (name, v) in enumerate(out.items()):
            f.write(f'"{name}": {{"model": {json.dumps(v["model"])}, "sha256": "{v["sha256"]}", "cases": [\n')
            f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in v["cases"]))
            f.write("\n]}" + ("," if k + 1 < len(out) else "") + "\n")
        f.write("}\n")
    print(f"wrote {dest}: {sum(len(v['cases']) for v in out.values())} cases")


main()
