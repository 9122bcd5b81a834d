"""Claude token counts of texts by ctok (an offline reconstruction of Claude's tokenizer).

Reads JSON lines {"i": n, "text": "..."} on stdin and writes JSON lines {"i": n, "3.0": c, "4.7": c,
"4.8": c} on stdout: the count of each text sent as one user message, frame included, for each
tokenizer family ctok reconstructs. The versions asked for can be given as arguments instead
(`ctok_counts.py 3.0 4.7 4.8 5.5`: ctok's version strings, routed by ctok to one of its families).
The first line written is {"meta": {...}}: the versions of ctok, Python and its Unicode data. Run
by run.mjs; needs CPython >= 3.12 and the ctok package.
"""

import json
import sys
import unicodedata
from importlib.metadata import version

from ctok import token_count

VERSIONS = ("3.0", "4.7", "4.8")


def main() -> None:
    versions = tuple(sys.argv[1:]) or VERSIONS
    meta = {
        "ctok": version("ctok"),
        "regex": version("regex") if _has("regex") else None,
        "python": sys.version.split()[0],
        "unicode": unicodedata.unidata_version,
    }
    out = sys.stdout
    out.write(json.dumps({"meta": meta}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        item = json.loads(line)
        row = {"i": item["i"]}
        for v in versions:
            row[v] = token_count(item["text"], v)
        out.write(json.dumps(row) + "\n")


def _has(dist: str) -> bool:
    try:
        version(dist)
        return True
    except Exception:
        return False


if __name__ == "__main__":
    main()
