#!/usr/bin/env python3
"""The GEMM tuning table from tester sweeps (tester --routine gemm_vbatched --sweep --json ...).

    gemm_table.py BASE_TABLE OUT_TABLE SWEEP.json... [--device NAME] [--commit C] [--cuda V] [--results DIR]
                  [--date ISO] [--precisions sdcz] [--split] [--keep-classes]

For each precision and x the sweep measured, the fastest configuration becomes the entry of size class
n = x (the largest x of a precision: every larger size too, n = 2147483647); the precisions the sweeps
did not measure keep BASE_TABLE's entries. Rows of set-up gemm (sizes uniform in [1, x]) and gemm_bin
(sizes in [x/2 + 1, x]: the problems of the size bin up to x of the binned dispatch) are read; where both
measured one x, gemm_bin's rows decide above the first bin (x > 128), gemm's at and below it. Each entry's provenance names the run, the runner-up and the
candidates. With --keep-classes a measured precision keeps BASE_TABLE's entries of the size classes the
sweeps did not measure (n = 2147483647 counts as the largest x measured), so that a sweep of the large
bins alone replaces only their entries. Adopting a committed run's winners into the shipped table: BASE_TABLE
libsolver/tuning/sm90-gemm.json, the folder's sweep-*.json, --commit/--date of that run (its commit.txt and
the sweep's time) and --results the folder, so that each entry names its evidence. The file is the form of libsolver/tuning/sm90-gemm.json (BATCHSOLVE_TUNING_FILE reads it).
"""
import argparse
import datetime
import json
import sys

ALL_SIZES = 2147483647


def whole(s, t):
    return s // t * t


def ceil_to(s, t):
    return -(-s // t) * t


def split_model(x, rows):
    """The region split of the size bin up to x (sizes uniform in [x/2 + 1, x], m = n = k = s): for each
    pair (interior tile, edge tile dividing it) of the bin's measured configurations, the predicted time
    of the whole tiles at the interior tile's own rate plus the ragged edges at the edge tile's, each
    rate the measured one over its tile's padding (the flops it computes per useful flop). Returns the
    best (predicted ms, interior config text, edge config text) or None."""
    sizes = range(x // 2 + 1, x + 1)
    useful = sum(2.0 * s ** 3 for s in sizes)
    rate = {}  # config text -> computed (padded) flops per ms
    for ms, config, _ in rows:
        c = json.loads(config)
        padded = sum(2.0 * ceil_to(s, c["blk_m"]) * ceil_to(s, c["blk_n"]) * s for s in sizes)
        rate[config] = max(rate.get(config, 0), padded / ms)
    best = None
    for big in rate:
        b = json.loads(big)
        for small in rate:
            e = json.loads(small)
            if small == big or b["blk_m"] % e["blk_m"] or b["blk_n"] % e["blk_n"]:
                continue
            inner = sum(2.0 * whole(s, b["blk_m"]) * whole(s, b["blk_n"]) * s for s in sizes)
            # the edge kernel's tiles: every tile of its own grid outside the interior corner
            edge = sum(2.0 * s * (ceil_to(s, e["blk_m"]) * ceil_to(s, e["blk_n"]) - whole(s, b["blk_m"]) * whole(s, b["blk_n"]))
                       for s in sizes)
            ms = inner / rate[big] + edge / rate[small]
            if best is None or ms < best[0]:
                best = (ms, big, small)
    return best


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--device", default="NVIDIA H200")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--cuda", default="13.0")
    ap.add_argument("--date", default="", help="when the sweep ran (ISO 8601, UTC); default now (a table written in the run)")
    ap.add_argument("--results", default="", help="the results folder the sweep is committed in (provenance)")
    ap.add_argument("--precisions", default="sdcz", help="only these precisions' entries are replaced (default all measured)")
    ap.add_argument("--split", action="store_true",
                    help="region split: for each swept bin above the first, the (interior, edge) pair the split model "
                         "predicts fastest, where it beats the bin's measured winner by 5 %%: gemm_vbatched_edge entries")
    ap.add_argument("--keep-classes", action="store_true",
                    help="a measured precision keeps the base table's entries of the size classes not measured")
    a = ap.parse_args(argv)
    base = json.load(open(a.base))
    timed = {}  # (precision, x) -> [(ms, config text, GFLOP/s)]
    setups = {}  # (precision, x) -> the set-up its rows come from
    for path in a.sweeps:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"gemm_table: {path} skipped ({e})", file=sys.stderr)
            continue
        for row in doc.get("rows", []):
            if row.get("routine") != "gemm_vbatched" or row.get("status") != "ok" or not row.get("variant"):
                continue
            words = row.get("case", "").split()
            setup = "gemm_bin" if "gemm_bin" in words else "gemm" if "gemm" in words else None
            if "time_ms" not in row or setup is None:
                continue
            if row["precision"] not in a.precisions:
                continue
            key = (row["precision"], int(row["n"]))
            preferred = "gemm_bin" if key[1] > 128 else "gemm"
            if key in setups and setups[key] != setup:
                if setup != preferred:
                    continue
                timed.pop(key, None)  # the preferred set-up replaces the other's rows
            setups[key] = setup
            timed.setdefault(key, []).append((float(row["time_ms"]), row["variant"], row.get("gflops")))
    if not timed:
        print("gemm_table: no sweep rows; the base table is written unchanged", file=sys.stderr)
    now = a.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    measured = sorted({p for p, _ in timed})
    if a.keep_classes:
        swept = {(p, ALL_SIZES if x == max(y for q, y in timed if q == p) else x) for p, x in timed}
        entries = [e for e in base["entries"] if (e["precision"], e["n"]) not in swept]
    else:
        entries = [e for e in base["entries"] if e["precision"] not in measured]
    for p in measured:
        xs = sorted(x for q, x in timed if q == p)
        for x in xs:
            ranked = sorted(timed[(p, x)])
            ms, config, gflops = ranked[0]
            runner = f"; runner-up {ranked[1][1]} {ranked[1][0]:.4f} ms" if len(ranked) > 1 else ""
            sizes = f"sizes uniform in [{x // 2 + 1}, {x}] (one size bin)" if setups[(p, x)] == "gemm_bin" else \
                f"sizes uniform in [1, {x}]"
            split = split_model(x, ranked) if a.split and setups[(p, x)] == "gemm_bin" else None
            if split and split[0] < 0.95 * ms:
                entries.append({
                    "routine": "gemm_vbatched_edge", "precision": p, "layout": "column_major",
                    "n": ALL_SIZES if x == xs[-1] else x,
                    "best": {"config": json.loads(split[2])},
                    "provenance": f"region split model from the sweep on {a.device} {now} (commit {a.commit}, CUDA {a.cuda}): "
                                  f"bin [{x // 2 + 1}, {x}], interior {split[1]} with this edge tile predicted "
                                  f"{split[0]:.4f} ms against the whole-tile winner's measured {ms:.4f} ms" +
                                  (f"; {a.results}" if a.results else "")})
                runner = f"; runner-up {config} {ms:.4f} ms as one tile (the split's interior tile is chosen here)"
                config = split[1]
                ms = next(r[0] for r in ranked if r[1] == config)
                gflops = next(r[2] for r in ranked if r[1] == config)
            elif a.split and setups[(p, x)] == "gemm_bin":  # the tile itself: no split (and no larger class's edge)
                entries.append({
                    "routine": "gemm_vbatched_edge", "precision": p, "layout": "column_major",
                    "n": ALL_SIZES if x == xs[-1] else x, "best": {"config": json.loads(config)},
                    "provenance": f"no region split (the edge tile is the bin's own): the split model from the sweep on "
                                  f"{a.device} {now} (commit {a.commit}) predicts no gain of 5 % over {ms:.4f} ms"})
            entries.append({
                "routine": "gemm_vbatched", "precision": p, "layout": "column_major",
                "n": ALL_SIZES if x == xs[-1] else x,
                "best": {"config": json.loads(config)},
                "provenance": f"tester --routine gemm_vbatched --sweep on {a.device} {now} (commit {a.commit}, CUDA {a.cuda}): "
                              f"square GEMM, 2000 problems, {sizes}, {ms:.4f} ms "
                              f"({gflops:.0f} GFLOP/s), best of {len(ranked)}{runner}" +
                              (f"; {a.results}" if a.results else "")})
    order = "sdcz"
    entries.sort(key=lambda e: (e["routine"], order.index(e["precision"]), e["n"]))
    table = dict(base)
    table.update({"device": a.device, "cuda_version": a.cuda, "date": now, "commit": a.commit, "entries": entries})
    table["note"] = ("n: the largest max(max_m, max_n) an entry serves; with the size-binned dispatch also the size bin "
                     "of the problems up to n; each entry's provenance names its measurement")
    with open(a.out, "w") as f:
        f.write("{\n")
        keys = [k for k in table if k != "entries"]
        for k in keys:
            f.write(f' {json.dumps(k)}: {json.dumps(table[k])},\n')
        f.write(' "entries": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in entries))
        f.write("\n ]\n}\n")
    for e in entries:
        if e["precision"] in measured:
            edge = " (edge)" if e["routine"] == "gemm_vbatched_edge" else ""
            print(f"gemm_table: {e['precision']} n={e['n']}{edge}: {json.dumps(e['best']['config'], separators=(',', ':'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
