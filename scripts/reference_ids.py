"""How the reference scripts (gemini-reference.py, mistral-reference.py) record id sequences:
full ids up to FULL_IDS_MAX, and always a 64-bit FNV-1a hash of the ids as little-endian u32s,
which the Rust tests recompute."""

M64 = (1 << 64) - 1
FULL_IDS_MAX = 64


def fnv(ids):
    h = 0xCBF29CE484222325
    for i in ids:
        for b in i.to_bytes(4, "little"):
            h = ((h ^ b) * 0x100000001B3) & M64
    return format(h, "016x")
