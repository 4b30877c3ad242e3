#!/usr/bin/env python3
"""Writes a tuning table (libsolver/tuning schema) whose column-major entries run the shared-memory
family (libsolver/src/codegen/cholesky/shared_memory.hpp: staged with looking = left), for
BATCHSOLVE_TUNING_FILE: the tester then times the new kernels where the committed tables would run
the register or staged ones. Two variants:

  default  the library's own defaults (shared_memory_default_config of shared_memory.cpp, mirrored
           here: keep the two in step; ColumnMajorSharedMemory.DefaultsAsDocumented pins the C++ side)
  wide     twice the warps per matrix (at most 32), the rest as the default: more threads on the
           trailing update, fewer matrices per block at small n
  regs64   the default with max_registers = 64 (__launch_bounds__ asks for 8 blocks of 128 threads per
           SM): the first call's kernels used 93-127 registers, which held s n = 32-64 to 5 blocks

Usage: shared_memory_table.py --output FILE [--variant default|wide] [--n 8,16,32] [--precision s,d]
       [--routine potrf,posv]
"""
import argparse
import json
import sys

ELEMENT_BYTES = {"s": 4, "d": 8, "c": 8, "z": 16}
MAX_SHARED_BYTES = 232448  # column_major_max_shared_bytes (227 KiB, sm_90)
MAX_N = 256                # shared_memory_max_n


def largest_n(p):
    n = 1
    while n < MAX_N and (n + 1) * (n + 1) * ELEMENT_BYTES[p] <= MAX_SHARED_BYTES:
        n += 1
    return n


def default_config(routine, p, n):
    """Mirror of shared_memory_default_config (shared_memory.cpp)."""
    blocks_per_sm = max(1, MAX_SHARED_BYTES // (n * n * ELEMENT_BYTES[p]))
    warps = min(16, max((n + 31) // 32, (8 + blocks_per_sm - 1) // blocks_per_sm))
    mpb = max(1, min(8, 4 // warps))
    while mpb > 1 and mpb * n * n * ELEMENT_BYTES[p] > 64 * 1024:
        mpb -= 1
    c = {"staged": True, "looking": "left", "threads_per_block": 0, "warps_per_matrix": warps,
         "matrices_per_block": mpb, "nb": 0, "rows_per_thread": 0}
    if routine == "potrs":
        return c
    c["nb"] = min(n, 8)
    c["rows_per_thread"] = 2 if n <= 16 else 4
    return c


def variant_config(variant, routine, p, n):
    c = default_config(routine, p, n)
    if variant == "regs64":
        c["max_registers"] = 64
    if variant == "wide":
        c["warps_per_matrix"] = min(32, 2 * c["warps_per_matrix"])
        c["matrices_per_block"] = max(1, min(c["matrices_per_block"], 1024 // (32 * c["warps_per_matrix"])))
        while c["matrices_per_block"] > 1 and c["matrices_per_block"] * n * n * ELEMENT_BYTES[p] > 64 * 1024:
            c["matrices_per_block"] -= 1
    return c


def parse_list(text, convert=str):
    out = []
    for part in text.split(","):
        if ":" in part:
            lo, hi = part.split(":")[:2]
            out += list(range(int(lo), int(hi) + 1))
        elif part:
            out.append(convert(part))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", required=True, help="the table to write")
    ap.add_argument("--variant", default="default", choices=["default", "wide", "regs64"])
    ap.add_argument("--n", default="1:256", help="orders (list or first:last)")
    ap.add_argument("--precision", default="s,d,c,z")
    ap.add_argument("--routine", default="potrf,potrs,posv")
    ap.add_argument("--batch", type=int, default=16384, help="the table's batch (lookup picks the nearest)")
    ap.add_argument("--commit", default="", help="the commit whose defaults the table records")
    ap.add_argument("--date", default="", help="UTC date of writing")
    a = ap.parse_args()
    entries = []
    for routine in parse_list(a.routine):
        for p in parse_list(a.precision):
            for n in parse_list(a.n, int):
                if 1 <= n <= largest_n(p):
                    entries.append({"routine": routine, "precision": p, "layout": "column_major", "n": n,
                                    "best": {"config": variant_config(a.variant, routine, p, n)}})
    table = {"arch": "sm_90", "arch_number": 90, "device": "none (reasoned defaults, not tuned)",
             "cuda_version": "13.0", "date": a.date, "commit": a.commit, "batch": a.batch, "entries": entries}
    with open(a.output, "w") as f:
        f.write("{\n")
        for key in ("arch", "arch_number", "device", "cuda_version", "date", "commit", "batch"):
            f.write(f' "{key}": {json.dumps(table[key])},\n')
        f.write(' "entries": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in entries))
        f.write("\n ]\n}\n")
    print(f"{a.output}: {len(entries)} entries ({a.variant})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
