#!/usr/bin/env python3
"""Writes a tuning table (the libsolver/tuning schema, for BATCHSOLVE_TUNING_FILE) that is the committed
sm90.json with its column-major potrf and posv entries at the chosen orders replaced by one design:

  fused       the fused family (libsolver/src/codegen/cholesky/fused.hpp: staged, warps_per_matrix = 0):
              the interleaved one-thread entry's nb, looking order and unrolling of the same routine,
              precision and n (its library default, nb = 0, where that entry is a cooperative kernel),
              and threads_per_block = C matrices per block, the largest power of two <= 64 whose
              squares (pitch C | 1) fit --block-kib of shared memory (--halve: half of that C, more
              blocks per SM with smaller chunks)
  warp_steps  the committed register entry with looking = left (its steps synchronised per warp), where
              its threads per matrix divide 32; other entries stay as committed
  rows        the register kernels with one row per thread (rows_per_thread = threads_per_row = 1: n
              threads per matrix, fully unrolled, 128 threads per block), looking = left (steps
              synchronised per warp) where n divides 32, right otherwise: the library's form of
              experiments/small-rows-prototype's "rows" design

  --lean      (with rows) config.lean_addressing where the rows kernel runs (potrf, n = 4, 8, 16, 32):
              one pointer per lane stepped by lda, no minimum of blocks in the launch bounds
  --max-registers s32=56,d16=72,...  (with rows) config.max_registers of those potrf cases (the cap
              becomes the launch bounds' minimum of blocks)
  rows_packed one row per lane with lean addressing and steps synchronised per warp wherever the rows
              kernels run it (column_major.cpp: potrf at n = 4, 8, 16, 32 the rows kernel, potrf at other n
              and posv at every n <= 32 that is a multiple of the 16-byte vector the packed rows kernel,
              floor(32 / n) whole matrices per warp; posv factors and solves in the one kernel), fully
              unrolled, --threads-per-block threads per block; the other orders stay as committed
  shape       the register kernels with the tile --shape RAxTC (rows_per_thread x threads_per_row: a
              matrix takes ceil(n / RA) * TC threads, each RA rows of ceil(n / TC) columns; potrf on a
              square grid, ceil(n / RA) == TC >= 4, and posv on one of side 8, 16, keep only the
              triangle's share), looking --looking (right; left: the steps synchronised per warp, where a
              matrix's threads divide 32), fully unrolled at n <= 32, the committed register entry's nb (the library default
              where the committed entry is staged), --threads-per-block threads per block; cases the
              shape does not fit (more than 1024 threads or a tile over 224 registers) stay as committed
  --compile-time-ld  (with shape) config.compile_time_ld where the square-grid kernel runs: lda = n in
              the kernel text (calls with another lda run the same entry with lda at run time)
  --lean      (with shape) config.lean_addressing where the square-grid kernel runs: its lean step loop
              (no branch around a step, no row guards where the side divides n, the column as vectors)
  --full-unroll on|off  (with shape) config.full_unroll instead of "n <= 32"

Every other entry stays as committed, so the cases not named run what they run today. Mirrors
fused_resolve (shared memory) and column_major.cpp's thread shape: keep them in step.
  fused_table.py --design fused --n 4,8,12,16,24,32 --output /tmp/fused.json
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMITTED = os.path.join(HERE, "..", "..", "libsolver", "tuning", "sm90.json")
ELEMENT_BYTES = {"s": 4, "d": 8, "c": 8, "z": 16}
MAX_TILE_WORDS = 224  # registers of one thread's tile (limits::column_major_max_tile_words)
MAX_SHARED = 232448  # bytes one block may opt in to on sm_90 (limits::max_shared_bytes_per_block)
SQUARE_GRID_MIN_SIDE = 4  # potrf on ceil(n / RA) == TC >= 4 threads a side: the square-grid kernel (column_major_square_grid_min_side)
SQUARE_GRID_POSV_SIDE = 8  # posv on a square grid whose side is a multiple of 8 (column_major_square_grid_posv_side)


def fused_bytes(n, esize, c, routine, nrhs_block):
    """Shared memory of a fused block (fused_resolve): squares, B columns (posv), flags."""
    pitch = c | 1
    a16 = lambda x: (x + 15) // 16 * 16
    total = a16(n * n * pitch * esize)
    if routine == "posv":
        total += a16(n * nrhs_block * pitch * esize)
    return total + a16(c * 4)


def fused_matrices(n, esize, routine, block_bytes, halve):
    c = 64  # at most 64: a batch of 16384 then makes at least 256 blocks, about two per SM
    while c > 1 and fused_bytes(n, esize, c, routine, 1) > block_bytes:
        c //= 2
    if halve and c > 1:
        c //= 2
    return c


def threads_per_matrix(n, cfg):
    """column_major.cpp's register shape: row_threads * threads_per_row (rows_per_thread rows each)."""
    ra = cfg.get("rows_per_thread") or 1
    tc = cfg.get("threads_per_row") or 1
    return math.ceil(n / ra) * tc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--design", choices=["fused", "warp_steps", "rows", "rows_packed", "shape"], required=True)
    ap.add_argument("--n", default="4,8,12,16,24,32", help="orders whose column-major entries are replaced (list; lo:hi ranges)")
    ap.add_argument("--precision", default="s,d")
    ap.add_argument("--routine", default="potrf,posv")
    ap.add_argument("--block-kib", type=float, default=110.0, help="fused: shared memory per block (KiB)")
    ap.add_argument("--halve", action="store_true", help="fused: half the matrices per block")
    ap.add_argument("--lean", action="store_true",
                    help="rows: lean_addressing where the rows kernel runs; shape: where the square-grid kernel runs (its lean step loop)")
    ap.add_argument("--full-unroll", choices=["on", "off"], default=None, help="shape: config.full_unroll (default: n <= 32)")
    ap.add_argument("--max-registers", default="", help="rows: PRECISION N=REGISTERS,... of potrf (e.g. s32=56)")
    ap.add_argument("--shape", default="1x2", help="shape: RAxTC, rows_per_thread x threads_per_row")
    ap.add_argument("--threads-per-block", type=int, default=128, help="shape, rows_packed: threads per block")
    ap.add_argument("--nb", type=int, default=-1,
                    help="shape: config.nb (-1: the committed register entry's, 0 where it is staged; a non-zero nb "
                         "keeps the library's full unrolling default at n <= 64 out)")
    ap.add_argument("--compile-time-ld", action="store_true", help="shape: compile_time_ld where the square-grid kernel runs")
    ap.add_argument("--looking", choices=["right", "left"], default="right",
                    help="shape: left synchronises the steps per warp (a matrix's threads must divide 32)")
    ap.add_argument("--committed", default=COMMITTED)
    ap.add_argument("--output", required=True)
    ap.add_argument("--list", action="store_true", help="print the replaced entries")
    a = ap.parse_args()
    ns = set()
    for part in a.n.split(","):
        if ":" in part:
            lo, hi = part.split(":")
            ns.update(range(int(lo), int(hi) + 1))
        elif part:
            ns.add(int(part))
    precs = set(a.precision.split(","))
    caps = {}
    for part in filter(None, a.max_registers.split(",")):
        case, regs = part.split("=")
        caps[(case[0], int(case[1:]))] = int(regs)
    routines = set(a.routine.split(","))
    table = json.load(open(a.committed))
    key = next(k for k, v in table.items() if isinstance(v, list) and v and isinstance(v[0], dict) and "routine" in v[0])
    entries = table[key]
    index = {(e["routine"], e["precision"], e["layout"], e["n"]): e for e in entries}
    replaced = []
    for e in entries:
        r, p, n = e["routine"], e["precision"], e["n"]
        if e["layout"] != "column_major" or r not in routines or p not in precs or n not in ns:
            continue
        cfg = dict(e["best"]["config"])
        if a.design == "fused":
            inter = index.get((r, p, "interleaved", n))
            ic = inter["best"]["config"] if inter else None
            one_thread = ic is not None and not ic.get("warps_per_matrix") and not ic.get("solve_warps_per_matrix")
            new = {k: (v if k == "looking" else False if isinstance(v, bool) else 0) for k, v in cfg.items()}  # field order kept
            new["looking"] = ic["looking"] if one_thread else "top"
            new["nb"] = ic["nb"] if one_thread else 0
            new["full_unroll"] = bool(ic["full_unroll"]) if one_thread else False
            new["max_registers"] = ic.get("max_registers", 0) if one_thread else 0
            new["staged"] = True
            new["warps_per_matrix"] = 0
            new["nrhs_block"] = 1
            new["threads_per_block"] = fused_matrices(n, ELEMENT_BYTES[p], r, a.block_kib * 1024, a.halve)
            if fused_bytes(n, ELEMENT_BYTES[p], new["threads_per_block"], r, 1) > MAX_SHARED:
                continue  # not even one matrix fits: keep the committed entry
            cfg = new
        elif a.design == "rows":
            if n > 32:
                continue
            new = {k: (v if k == "looking" else False if isinstance(v, bool) else 0) for k, v in cfg.items()}  # field order kept
            new.update(rows_per_thread=1, threads_per_row=1, full_unroll=True, threads_per_block=128, nrhs_block=1)
            new["looking"] = "left" if 32 % n == 0 else "right"
            if r == "potrf" and n in (4, 8, 16, 32):  # column_major.cpp's rows kernel (one_row_per_lane)
                if a.lean:
                    new["lean_addressing"] = True
                new["max_registers"] = caps.get((p, n), 0)
            cfg = new
        elif a.design == "rows_packed":
            vec = 16 // ELEMENT_BYTES[p]
            if n > 32 or n % vec != 0 or (r == "potrf" and 32 % n == 0 and n < 4):
                continue
            new = {k: (v if k == "looking" else False if isinstance(v, bool) else 0) for k, v in cfg.items()}  # field order kept
            new.update(rows_per_thread=1, threads_per_row=1, full_unroll=True, threads_per_block=a.threads_per_block,
                       nrhs_block=1, looking="left", lean_addressing=True)
            cfg = new
        elif a.design == "shape":
            ra, tc = (int(x) for x in a.shape.lower().split("x"))
            words = ELEMENT_BYTES[p] // 4
            side = math.ceil(n / tc)
            grid = math.ceil(n / ra) == tc  # square: only the triangle's share (potrf side >= 4, posv side 8, 16, ...)
            square = grid and (tc >= SQUARE_GRID_MIN_SIDE if r == "potrf" else tc % SQUARE_GRID_POSV_SIDE == 0)
            tile = side * (side + 1) // 2 if square else ra * side
            if math.ceil(n / ra) * tc > 1024 or tile * words > MAX_TILE_WORDS:
                continue
            new = {k: (v if k == "looking" else False if isinstance(v, bool) else 0) for k, v in cfg.items()}  # field order kept
            new.update(rows_per_thread=ra, threads_per_row=tc, full_unroll=n <= 32, threads_per_block=a.threads_per_block,
                       nrhs_block=1, looking=a.looking,
                       nb=a.nb if a.nb >= 0 else 0 if cfg.get("staged") else cfg.get("nb", 0))
            # the square-grid kernel's posv needs block barriers (right); potrf takes either
            if a.compile_time_ld and square and (r == "potrf" or a.looking == "right"):
                new["compile_time_ld"] = True
            if a.lean and square and (r == "potrf" or a.looking == "right"):  # the square grid's lean step loop
                new["lean_addressing"] = True
            if a.full_unroll is not None:
                new["full_unroll"] = a.full_unroll == "on"
            cfg = new
        else:
            if cfg.get("staged") or 32 % threads_per_matrix(n, cfg) != 0:
                continue
            cfg["looking"] = "left"
        e["best"] = {"config": cfg}
        replaced.append((r, p, n, cfg))
    table["date"] = table.get("date", "")
    table["note"] = "candidate table (%s%s%s%s) for BATCHSOLVE_TUNING_FILE, written by validation/cusolverdx/fused_table.py" % (
        a.design, ", lean addressing" if a.lean else "", ", max_registers " + a.max_registers if a.max_registers else "",
        " %s, %d threads per block%s" % (a.shape, a.threads_per_block, ", lda = n compiled in" if a.compile_time_ld else "")
        if a.design == "shape" else "")
    with open(a.output, "w") as f:
        f.write("{\n")
        items = [(k, v) for k, v in table.items() if k != key]
        for k, v in items:
            f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write(" %s: [\n" % json.dumps(key))
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in entries))
        f.write("\n ]\n}\n")
    if a.list:
        for r, p, n, cfg in replaced:
            print(r, p, n, {k: v for k, v in cfg.items() if v not in (0, False)})
    print("%s: %d column-major entries replaced (%s)" % (a.output, len(replaced), a.design), file=sys.stderr)


if __name__ == "__main__":
    main()
