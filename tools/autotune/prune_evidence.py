#!/usr/bin/env python3
"""Evidence for the autotuner's measured pruning (tools/autotune/search_space.hpp, "measured pruning").

Reads every timed candidate of the committed sweep logs (results/2026-11-25-h100-5787a87-autotune-runs-1-43:
the first potrf sweep's candidates.jsonl.xz and logs/candidates-run*.jsonl.xz; batch 16384 only) and,
for each pruning rule, compares per case and run the best time among the candidates the rule keeps
with the best time among all candidates of that stage ("loss" = kept best / best, 1.000 = no loss).
Prints one line per rule: cases, candidates kept, and the loss's median, 90th percentile and maximum.
The last lines judge the sizes between anchors (kFillStep) against the winners of the table as it
was before run 42 (logs/table-before-run42.json.xz: full searches at every n; run 42's own entries
for those sizes were chosen by the rule itself and cannot judge it).

    tools/autotune/prune_evidence.py [--results results/2026-11-25-h100-5787a87-autotune-runs-1-43]
"""
import argparse
import collections
import glob
import json
import lzma
import os
import statistics
import sys

# The results folder of the tuner's runs 1-43 (their candidate logs and the tables they were judged against).
AUTOTUNE_RUNS = "2026-11-25-h100-5787a87-autotune-runs-1-43"
TUNING_BATCH = 16384
PRUNED_ABOVE_N = 12          # kInterleavedPrunedAboveN
SOLVE_PRUNED_ABOVE_N = 24    # kSolvePrunedAboveN
LARGEST_TILES = 3            # kInterleavedLargestTiles
SOLVE_MIN_TILE = 7           # kSolvePrunedMinTile
MAX_THREADS_PER_ROW = 8      # kColumnMajorPrunedMaxThreadsPerRow
MAX_ROWS_PER_THREAD = 4      # kColumnMajorPrunedMaxRowsPerThread
STAGED_MAX_WARPS = 4         # kStagedPrunedMaxWarps
SEED_STAGED_POSV = 4         # kSeedStagedPosv
COOP_POTRF_TILE = 4          # kCoopPruned's first row
COOP_POSV_TILE = 4           # kCoopPruned's second row
COOP_POSV_UNCAPPED_MAX_N = 32  # kCoopPosvUncappedMaxN
ANY = -1                     # kAnyCoop
COOP_PRUNED = [("potrf", 1, 128, ANY, 4), ("posv", 1, 128, ANY, 4), ("posv", 17, 64, ANY, 8),
               ("potrs", 33, 128, 2, ANY), ("potrf", 17, 32, 8, ANY)]  # kCoopPruned (128: every larger n)
STAGED_WIDE_MAX_N = 32           # kStagedWidePrunedMaxN (kStagedWideMaxN: 48)
COLUMN_MAJOR_REGISTER_MAX_N = 64  # kColumnMajorRegisterMaxN
COLUMN_MAJOR_STAGED_MIN_N = 33    # kColumnMajorStagedMinN
POSV_SPLIT_ONLY_ABOVE_N = 64  # kPosvSplitOnlyAboveN
COOP_ONLY_ABOVE_N = 32       # kCoopOnlyAboveN
FILL_ABOVE_N = 32            # kFillAboveN
FILL_STEP = 4                # kFillStep


def log_files(results):
    return sorted(glob.glob(os.path.join(results, "candidates.jsonl.xz")) +
                  glob.glob(os.path.join(results, "logs", "candidates-run*.jsonl.xz")))


def timed_candidates(results, pruned_searches):
    """(log file, record) of every timed candidate at the tuning batch; with pruned_searches False,
    not those of runs that searched the pruned space (run 41 on: "search", or its commit), which
    cannot judge the pruning."""
    for path in log_files(results):
        use = False
        with lzma.open(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                if r.get("event") == "start":
                    pruned = r.get("search") == "pruned" or r.get("commit") == "da8c959"
                    use = r.get("batch") == TUNING_BATCH and (pruned_searches or not pruned)
                elif use and "routine" in r and r.get("ms") is not None:
                    yield path, r


def read_logs(results, pruned_searches=False):
    """(file, routine, precision, layout, n, stage) -> {config key: ms}, timed candidates only."""
    stages = collections.defaultdict(dict)
    for path, r in timed_candidates(results, pruned_searches):
        c = r["config"]
        key = (os.path.basename(path), r["routine"], r["precision"], r["layout"], r["n"], r["stage"])
        shape = (c.get("nb"), c.get("looking"), c.get("full_unroll"), c.get("rows_per_thread"),
                 c.get("threads_per_row"), c.get("warps_per_matrix"), c.get("matrices_per_block"),
                 c.get("max_registers"), bool(c.get("staged")), bool(c.get("tensor_cores")),
                 c.get("solve_warps_per_matrix", 0), c.get("solve_nb", 0))  # posv in two kernels (run 43 on)
        stages[key][shape] = r["ms"]
    return log_files(results), stages


def summary(losses, kept, total):
    if not losses:
        return "no cases"
    losses.sort()
    return (f"{len(losses)} cases, kept {kept}/{total} candidates, loss median {statistics.median(losses):.3f} "
            f"p90 {losses[int(0.9 * (len(losses) - 1))]:.3f} max {losses[-1]:.3f}, "
            f"{sum(x > 1.03 for x in losses)} cases over 3%")


def evaluate(stages, select, keep, min_candidates=2, merge_runs=False):
    """Loss of rule `keep(case, shape, shapes)` over the stages `select(case)` picks."""
    if merge_runs:  # the stage-1 shapes of one case across runs: later runs re-timed few of them
        merged = collections.defaultdict(dict)
        for k, v in stages.items():
            if select(k):
                merged[k[1:]].update(v)
        items = [((None,) + k, v) for k, v in merged.items()]
    else:
        items = [(k, v) for k, v in stages.items() if select(k)]
    losses, kept, total = [], 0, 0
    for k, v in items:
        if len(v) < min_candidates:
            continue
        sub = [t for shape, t in v.items() if keep(k, shape, v)]
        kept += len(sub)
        total += len(v)
        losses.append(min(sub) / min(v.values()) if sub else float("inf"))
    return summary(losses, kept, total)


def largest_tiles(v):
    return sorted({s[0] for s in v})[-LARGEST_TILES:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(__file__)
    ap.add_argument("--results", default=os.path.join(here, "..", "..", "results", AUTOTUNE_RUNS))
    ap.add_argument("--table", default=os.path.join(here, "..", "..", "results", AUTOTUNE_RUNS, "logs",
                                                    "table-before-run42.json.xz"),
                    help="the table (.json or .json.xz) whose winners the sizes between anchors are judged against")
    args = ap.parse_args()
    files, stages = read_logs(args.results)
    if not files:
        sys.exit(f"prune_evidence: no candidate logs under {args.results}")
    print(f"{len(files)} logs, {len(stages)} timed stages at batch {TUNING_BATCH}\n")

    for routine in ("potrf", "potrs"):
        for p in "sd":
            above = PRUNED_ABOVE_N if routine == "potrf" else SOLVE_PRUNED_ABOVE_N
            def select(k, routine=routine, p=p, above=above):
                return k[1] == routine and k[2] == p and k[3] == "interleaved" and k[4] > above and k[5] == "shape"
            if routine == "potrf":
                def keep(k, s, v):
                    tiles = largest_tiles(v)
                    return s[0] in tiles and (s[1] != "right" or s[0] == tiles[-1])
                name = f"interleaved potrf {p}, n > {PRUNED_ABOVE_N}: {LARGEST_TILES} largest tiles, right at the largest"
            else:
                def keep(k, s, v):
                    return s[0] >= SOLVE_MIN_TILE
                name = f"interleaved potrs {p}, n > {SOLVE_PRUNED_ABOVE_N}: tiles >= {SOLVE_MIN_TILE}"
            print(f"{name:78s} {evaluate(stages, select, keep, merge_runs=True)}")

    for routine in ("potrf", "posv"):
        for p in "sd":
            def select(k, routine=routine, p=p):
                return k[1] == routine and k[2] == p and k[3] == "column_major" and k[5] == "shape"
            name = (f"column-major {routine} {p}: <= {MAX_THREADS_PER_ROW} threads per row, "
                    f"<= {MAX_ROWS_PER_THREAD} rows per thread")
            print(f"{name:78s} "
                  f"{evaluate(stages, select, lambda k, s, v: s[4] <= MAX_THREADS_PER_ROW and s[3] <= MAX_ROWS_PER_THREAD, merge_runs=True)}")

    for routine in ("potrf", "posv", "potrs"):
        for stage in ("staged", "tensor_cores"):
            if routine == "potrs" and stage == "tensor_cores":
                continue
            def select(k, routine=routine, stage=stage):
                return k[1] == routine and k[5] == stage
            # the recorded winner that --revisit times beside the stage (warps_per_matrix 0) is not a candidate
            only = {k: {s: t for s, t in v.items() if s[5]} for k, v in stages.items()}
            name = f"{stage} {routine}: <= {STAGED_MAX_WARPS} warps per block"
            print(f"{name:78s} "
                  f"{evaluate(only, select, lambda k, s, v: s[5] * s[6] <= STAGED_MAX_WARPS, min_candidates=6)}")

    # posv's staged stage from potrf's best staged shapes of the same (precision, n): same run if any
    by_case = collections.defaultdict(list)
    for k, v in stages.items():
        v = {s: t for s, t in v.items() if s[5]}
        if k[3] == "column_major" and k[5] == "staged" and len(v) >= 6:
            by_case[(k[1], k[2], k[4])].append((k[0], v))
    losses, kept, total = [], 0, 0
    for (routine, p, n), runs in by_case.items():
        if routine != "posv" or ("potrf", p, n) not in by_case:
            continue
        run, posv = runs[-1]
        potrf_runs = by_case[("potrf", p, n)]
        same = [v for f, v in potrf_runs if f == run]
        potrf = same[0] if same else potrf_runs[-1][1]
        seeds = sorted(potrf, key=potrf.get)[:SEED_STAGED_POSV]
        sub = [posv[s] for s in seeds if s in posv]
        kept += len(sub)
        total += len(posv)
        losses.append(min(sub) / min(posv.values()) if sub else float("inf"))
    name = f"staged posv: potrf's {SEED_STAGED_POSV} best staged shapes"
    print(f"{name:78s} {summary(losses, kept, total)}")

    def select(k):
        return k[1] == "potrf" and k[5] == "coop"
    only = {k: {s: t for s, t in v.items() if s[5]} for k, v in stages.items()}
    name = f"cooperative potrf: no tile of {COOP_POTRF_TILE}"
    print(f"{name:78s} {evaluate(only, select, lambda k, s, v: s[0] != COOP_POTRF_TILE, min_candidates=9)}")

    # posv's cooperative stage is searched whole by the pruned searches too (runs 41-42): all runs
    def select_posv(k):
        return k[1] == "posv" and k[5] == "coop"
    _, every_stage = read_logs(args.results, pruned_searches=True)
    only = {k: {s: t for s, t in v.items() if s[5]} for k, v in every_stage.items()}
    name = f"cooperative posv: no tile of {COOP_POSV_TILE}"
    print(f"{name:78s} {evaluate(only, select_posv, lambda k, s, v: s[0] != COOP_POSV_TILE, min_candidates=12)}")

    # Rules that drop whole stages: judged on the case's best over all its stages (all runs).
    cases = collections.defaultdict(list)  # (file, routine, precision, layout, n) -> [(stage, shape, ms)]
    for k, v in every_stage.items():
        cases[k[:5]] += [(k[5], shape, ms) for shape, ms in v.items()]

    def case_rule(name, select, keep, required):
        losses, kept, total = [], 0, 0
        for k, v in cases.items():
            needs = required if isinstance(required, tuple) else (required,)  # each met by some candidate
            if not select(k) or not all(any(r(st, sh) for st, sh, _ in v) for r in needs):
                continue
            rest = [ms for st, sh, ms in v if keep(st, sh)]
            if not rest:
                continue
            losses.append(min(rest) / min(ms for _, _, ms in v))
            kept, total = kept + len(rest), total + len(v)
        print(f"{name:78s} {summary(losses, kept, total)}")

    for p in "sd":
        case_rule(f"column-major potrf/posv {p}, n > {COLUMN_MAJOR_REGISTER_MAX_N}: staged kernels only",
                  lambda k, p=p: k[1] in ("potrf", "posv") and k[2] == p and k[3] == "column_major" and
                  k[4] > COLUMN_MAJOR_REGISTER_MAX_N,
                  lambda st, sh: sh[8], (lambda st, sh: sh[8], lambda st, sh: not sh[8]))  # both kinds timed
        case_rule(f"column-major potrf/posv {p}, n < {COLUMN_MAJOR_STAGED_MIN_N}: no staged kernels",
                  lambda k, p=p: k[1] in ("potrf", "posv") and k[2] == p and k[3] == "column_major" and
                  k[4] < COLUMN_MAJOR_STAGED_MIN_N,
                  lambda st, sh: not sh[8], lambda st, sh: sh[8])
        # (the grid caps of an uncapped cooperative winner go with it)
        case_rule(f"interleaved/chunked posv {p}, n > {COOP_POSV_UNCAPPED_MAX_N}: cooperative only at the cap of 168",
                  lambda k, p=p: k[1] == "posv" and k[2] == p and k[3] != "column_major" and k[4] > COOP_POSV_UNCAPPED_MAX_N,
                  lambda st, sh: sh[10] or not (sh[5] and not sh[7]),  # two kernels: potrf's and potrs's
                  # judged where both caps were timed (not before the cap existed, nor where the rule applied)
                  (lambda st, sh: st == "coop" and sh[7] == 168, lambda st, sh: st == "coop" and sh[5] and not sh[7]))

        case_rule(f"interleaved/chunked posv {p}, n > {POSV_SPLIT_ONLY_ABOVE_N}: two kernels only (runs 43 on)",
                  lambda k, p=p: k[1] == "posv" and k[2] == p and k[3] != "column_major" and
                  k[4] > POSV_SPLIT_ONLY_ABOVE_N,
                  lambda st, sh: sh[10] > 0, (lambda st, sh: sh[10] > 0, lambda st, sh: sh[10] == 0))  # both timed

    # Rules of run 44 on: judged where the candidates they drop were timed (with others).
    for routine, lo, hi, warps, nb in COOP_PRUNED[2:]:  # the tiles of 4 are judged per stage above
        def dropped(st, sh, warps=warps, nb=nb):  # a grid cap runs the cooperative winner's kernel
            return st in ("coop", "grid") and sh[5] > 0 and warps in (ANY, sh[5]) and nb in (ANY, sh[0])
        what = f"{warps} warps" if warps != ANY else f"tile {nb}"
        case_rule(f"cooperative {routine}, n = {lo}..{hi}: no {what}",
                  lambda k, routine=routine, lo=lo, hi=hi: k[1] == routine and k[3] != "column_major" and lo <= k[4] <= hi,
                  lambda st, sh, dropped=dropped: not dropped(st, sh), dropped)
    cooperative = lambda st, sh: sh[5] > 0 or sh[10] > 0  # (posv in two kernels: a cooperative potrs)
    for routine, upto in (("potrs", 128), ("posv", POSV_SPLIT_ONLY_ABOVE_N)):
        case_rule(f"interleaved/chunked {routine}, n = {COOP_ONLY_ABOVE_N + 1}..{upto}: cooperative kernels only",
                  lambda k, routine=routine, upto=upto: k[1] == routine and k[3] != "column_major" and
                  COOP_ONLY_ABOVE_N < k[4] <= upto,
                  # both kinds timed by a search (a size between anchors also times the anchors' winners,
                  # which the rule leaves as they are: n = 32's one-thread winner at n = 33 won there twice)
                  cooperative, (cooperative, lambda st, sh: st != "known" and not cooperative(st, sh)))
    wide = lambda st, sh: sh[8] and sh[0] > 16
    case_rule(f"column-major staged, n > {STAGED_WIDE_MAX_N}: panels of at most 16",
              lambda k: k[3] == "column_major" and k[4] > STAGED_WIDE_MAX_N,
              lambda st, sh: not wide(st, sh), wide)

    # Run 43's rules at once (kPosvSplitOnlyAboveN, kCoopOnlyAboveN, kCoopPruned's last three,
    # kStagedWidePrunedMaxN), per case over every run; the one-thread kernels a size between anchors
    # times as its anchors' winners stay.
    def run43_drops(k, st, sh):
        routine, interleaved, n = k[1], k[3] != "column_major", k[4]
        if interleaved and routine == "posv" and n > POSV_SPLIT_ONLY_ABOVE_N and not sh[10] and st != "known":
            return True
        if interleaved and routine != "potrf" and n > COOP_ONLY_ABOVE_N and not cooperative(st, sh) and st != "known":
            return True
        if interleaved and st in ("coop", "grid") and sh[5] > 0:
            for r, lo, hi, warps, nb in COOP_PRUNED[2:]:
                if r == routine and lo <= n <= hi and warps in (ANY, sh[5]) and nb in (ANY, sh[0]):
                    return True
        return n > STAGED_WIDE_MAX_N and wide(st, sh)
    losses, kept, total = [], 0, 0
    for k, v in cases.items():
        rest = [ms for st, sh, ms in v if not run43_drops(k, st, sh)]
        if len(rest) == len(v) or not rest:  # nothing dropped, or no search of the kind kept
            continue
        losses.append(min(rest) / min(ms for _, _, ms in v))
        kept, total = kept + len(rest), total + len(v)
    print(f"{'the rules from run 43 on, together':78s} {summary(losses, kept, total)}")

    fill_sizes(args.results, args.table)


def fill_sizes(results, table_path, bands=((FILL_ABOVE_N, 128),)):
    """Sizes between anchors: how often the anchors' winners (the rule), and their winners and
    runners-up (the rule before run 42), hold the table's winner, and, where the logs timed them at
    that size, how far their best is from the winner."""
    with (lzma.open(table_path, "rt") if table_path.endswith(".xz") else open(table_path)) as f:
        table = {(e["routine"], e["precision"], e["layout"], e["n"]): e for e in json.load(f)["entries"]}
    # run 43 added the two-kernel posv fields; at 0 they are the older logs' configurations
    key_of = lambda c: json.dumps({k: v for k, v in c.items() if not (k.startswith("solve_") and v == 0)},
                                  sort_keys=True)
    timed = collections.defaultdict(dict)
    for _, r in timed_candidates(results, pruned_searches=True):
        if r.get("pruned"):  # one sample only
            continue
        at = timed[(r["routine"], r["precision"], r["layout"], r["n"])]
        k = key_of(r["config"])
        at[k] = min(at.get(k, float("inf")), r["ms"])
    for (above, upto), runners_up in ((b, r) for b in bands for r in (False, True)):
        cases = held = 0
        losses = []
        for (routine, p, layout, n), e in table.items():
            if n <= above or n > upto or n % FILL_STEP == 0:
                continue
            cases += 1
            below = n - n % FILL_STEP
            candidates = []
            for m in (below, below + FILL_STEP):
                a = table.get((routine, p, layout, m))
                if a:
                    candidates += [key_of(a["best"]["config"])]
                    if runners_up and a.get("runner_up"):
                        candidates.append(key_of(a["runner_up"]["config"]))
            winner = key_of(e["best"]["config"])
            if winner in candidates:
                held += 1
                losses.append(1.0)
                continue
            at = timed.get((routine, p, layout, n), {})
            got = [at[c] for c in candidates if c in at]
            if winner in at and got:
                losses.append(min(got) / at[winner])
        name = (f"sizes between anchors (every {FILL_STEP}th n, {above} < n <= {upto}): the anchors' winners" +
                (" and runners-up" if runners_up else ""))
        losses.sort()
        print(f"{name:78s} {cases} cases, the winner among them in {held}; {len(losses)} judged (timed at n): "
              f"loss p95 {losses[int(0.95 * (len(losses) - 1))]:.3f} max {losses[-1]:.3f}, "
              f"{sum(x > 1.05 for x in losses)} cases over 5%")


if __name__ == "__main__":
    main()
