#!/usr/bin/env bash
# The tester against the six benches it replaced, on the same GPU in one run: for each bench, the old
# binary (from $OLD_BIN_DIR: sysv_bench, large_bench, vbatched_triangular_bench, vbatched_bench,
# multi_bench, cpu_small_bench, as built at 9b70afd) and the tester on the same cases, then one table
# of the figures side by side with new / old. A figure is reproduced when the ratio is within
# 0.95 .. 1.05. Times are compared where both sides time the same work on the same inputs; the
# variable-size BLAS-3 rows compare GFLOP/s (the tester draws each routine's sizes from a fresh
# generator, the old bench from one shared across routines, so the batches differ in their sizes).
# At most FOLD_BUDGET_S (230) s on one H200 (FOLD_STEPS=cpu,multi,... selects benches); writes
# $OUT/tester-fold/ (old/rK/*.json, new/rK/*.json, logs, fold.md); the table last.
# FOLD_ROUNDS=R (1) runs every selected bench R times, old and tester interleaved (old, new, old, new,
# ...), so that a drift of the host (clocks, other load) falls on both sides alike; the table then
# gives each figure's median over the rounds and its spread (max/min - 1) on each side, and a figure
# is reproduced when the medians agree within 5%.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/tester-fold; mkdir -p "$out/old" "$out/new"; round=1
run=/tmp/bundle/run
old_dir=${OLD_BIN_DIR:?OLD_BIN_DIR: the folder of the benches built at 9b70afd}
budget=${FOLD_BUDGET_S:-${TOPIC_BUDGET_S:-230}}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
# FOLD_REPORT_ONLY=1: no runs, the table, fold.json and targets.json again from OUT's old/ and new/.
report_only=${FOLD_REPORT_ONLY:-0}
if [[ $report_only != 1 ]]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
  git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
fi

# The old binary by its 9b70afd name (or with a batchsolve_ prefix), run with its own folder (and a
# lib/ beside it) first on the library path: OLD_BIN_DIR must hold the 9b70afd libbatchsolve*.so beside
# the benches (large_bench and sysv_bench do not load, or misread their options, with today's library).
old_bin() {
  local bin=$old_dir/$1; [[ -x $bin ]] || bin=$old_dir/batchsolve_$1
  echo "$bin"
}
# step NAME SECONDS old|new ARGS...: `old BENCH ARGS` runs the old bench, `new ARGS` the tester; bounded
# by the budget left.
step() {
  local name=$1 limit=$2 side=$3; shift 3
  # FOLD_STEPS=cpu,multi,tri runs only those benches' steps (both sides); default: every step.
  if [[ -n ${FOLD_STEPS:-} && ",$FOLD_STEPS," != *",${name%-*},"* ]]; then return; fi
  local l; l=$(left)
  (( l < 5 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  local cmd
  if [[ $side == old ]]; then
    local bin; bin=$(old_bin "$1"); shift
    [[ -x $bin ]] || { echo "$name: no $bin" | tee -a "$out/skipped.txt"; return; }
    cmd=(env "LD_LIBRARY_PATH=$old_dir:$old_dir/../lib:${LD_LIBRARY_PATH:-}" "$bin" "$@")
  else
    cmd=("$run" tester "$@")
  fi
  echo "== $name, round $round ($limit s)"
  timeout -k 5 "$limit" "${cmd[@]}" > "$out/$name.r$round.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}

# Both sides share one kernel cache: the old bench runs first and compiles (NVRTC) what the tester
# then finds; the first timed call of either comes after its warm-up, so compilation is never timed.
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/tester-fold-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
# OpenMP threads bound one per core on both sides. Unbound, a process now and then starts with two of
# its threads sharing a CPU, and every parallel region of that process waits out a scheduler slice:
# the CPU backend's 0.1-0.3 ms calls (n = 8, 16,384 matrices) took 5-7 ms in every repeat of such a
# process, and one-thread LAPACKE loops moved by up to 90 % from process to process (the 23e7de5 fold).
# FOLD_OMP_BIND=0 leaves the caller's settings.
if [[ ${FOLD_OMP_BIND:-1} == 1 ]]; then
  export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
fi
echo "OMP_PROC_BIND=${OMP_PROC_BIND:-unset} OMP_PLACES=${OMP_PLACES:-unset}" | tee "$out/omp.txt"
# One round of every selected bench; od and nd are the round's folders.
all_steps() {
  # The cheapest first: a step the budget cannot fit is skipped (listed in skipped.txt and below the table).
  # The CPU backend's small Cholesky against LAPACKE loops (the host's cores).
  step cpu-old 30 old cpu_small_bench --n 8,32,64 --batch 16384 --precision d,s --routine potrf,posv --rounds 5 \
    --distinct 512 --json "$od/cpu.json"
  step cpu-new 30 new --routine potrf,posv --backend cpu --n 8,32,64 --batch 16384 --precision d,s --distinct 512 \
    --ref lapack,lapack1 --repeat 5 --warmup 1 --seed 20261127 --json "$nd/cpu.json"

  # Several devices (one here: the one-device rows), d n = 16 and 32.
  step multi-old 25 old multi_bench --n 16,32 --precision d --batch 200000 --host-batch 100000 --repeat 5 --devices 0 \
    --json "$od/multi.json"
  step multi-new 15 new --routine multi_posv --n 16,32 --precision d --batch 200000 --host-batch 100000 --repeat 5 \
    --warmup 1 --devices 0 --seed 1 --json "$nd/multi.json"
  # LDL^T: z and d at 2048 and 4096 (seed 2025, the old default).
  step ldlt-old 30 old sysv_bench --n 2048,4096 --precision z,d --repeat 3 --seed 2025 --json "$od/ldlt.json"
  step ldlt-new 25 new --routine sysv_mixed --n 2048,4096 --precision z,d --repeat 3 --warmup 1 --seed 2025 --ref cusolver \
    --all-variants --json "$nd/ldlt.json"
  step nopiv-new 15 new --routine sytrf_nopiv --n 2048,4096 --precision z --repeat 3 --warmup 1 --seed 2025 --ref cusolver \
    --json "$nd/nopiv.json"
  # Large Cholesky: d and s at 4096 and 8192 (ours, ours as a graph, cusolverDnXpotrf), posv_mixed at 8192.
  step large-old 50 old large_bench --n 4096,8192 --precision d,s --repeat 5 --cpu-max 0 --mixed-min 8192 --no-split \
    --json "$od/large.json"
  step large-new 30 new --routine potrf_large --n 4096,8192 --precision d,s --repeat 5 --warmup 1 --ref cusolver \
    --all-variants --json "$nd/large.json"
  step mixed-new 15 new --routine posv_mixed --n 8192 --precision d --repeat 5 --warmup 1 --ref cusolver --all-variants \
    --json "$nd/mixed.json"
  # Variable-size BLAS-3: d gemm and syrk, x = 64 and 256, batch 2000.
  step vb-old 25 old vbatched_bench --routines gemm,syrk --precisions d --x 64,256 --batch 2000 --repeat 5 --cpu-max 0 \
    --seed 7 --json "$od/vb.json"
  step vb-new 15 new --routine gemm_vbatched,syrk_vbatched --setups gemm,syrk --n 64,256 --batch 2000 --precision d \
    --repeat 5 --warmup 1 --seed 7 --ref cublas-grouped,cublas --json "$nd/vb.json"
  # Triangular: d, x = 64 and 256, batch 2000, seed 2017 (the old default).
  step tri-old 30 old vbatched_triangular_bench --x 64,256 --batch 2000 --precision d --repeat 5 --seed 2017 \
    --json "$od/tri.json"
  step tri-new 20 new --routine trsm_vbatched,trmm_vbatched,potrf_vbatched --n 64,256 --batch 2000 --precision d \
    --repeat 5 --warmup 1 --seed 2017 --ref cublas,cublas-streams,cusolver --all-variants --json "$nd/tri.json"
}
rounds=${FOLD_ROUNDS:-1}
[[ $report_only == 1 ]] && rounds=0
for round in $(seq 1 "$rounds"); do
  od=$out/old/r$round nd=$out/new/r$round; mkdir -p "$od" "$nd"
  all_steps
done
python3 - "$out" <<'PY' | tee "$out/fold.md"
import json, os, statistics, sys
out = sys.argv[1]
ROUND = "r1"
def load(side, name):
    try:
        with open(os.path.join(out, side, ROUND, name + ".json")) as f:
            return json.load(f)
    except Exception:
        return None
rows = {}  # (bench, case, figure) -> ([old per round], [new per round]), in first-seen order
def add(bench, case, figure, old, new):
    o, n = rows.setdefault((bench, case, figure), ([], []))
    if isinstance(old, (int, float)): o.append(old)
    if isinstance(new, (int, float)): n.append(new)
def new_rows(*names):
    for name in names:
        doc = load("new", name)
        for r in (doc or {}).get("rows", []):
            yield r
def ref_ms(r, name):
    ref = r.get("refs", {}).get(name, {})
    return ref.get("time_ms") if ref.get("ran") else None

def match_round():
    old = load("old", "large")
    for o in (old or {}).get("rows", []):
        if o.get("routine") == "potrf":
            case = f"{o['precision']} n={o['n']}"
            for r in new_rows("large"):
                if r["precision"] == o["precision"] and r["n"] == o["n"]:
                    if r["variant"] == "":
                        add("large_bench", case, "potrf ours ms", o["ours_seconds"] * 1e3, r.get("time_ms"))
                        add("large_bench", case, "cusolverDnXpotrf ms", o["cusolver_seconds"] * 1e3, ref_ms(r, "cusolver"))
                        add("large_bench", case, "GEMM TFLOP/s", o["gemm_tflops"], r["detail"].get("gemm_tflops"))
                    if r["variant"] == "graph":
                        add("large_bench", case, "potrf ours (graph) ms", o["ours_graph_seconds"] * 1e3, r.get("time_ms"))
        elif o.get("routine") == "posv":
            case = f"d n={o['n']}"
            for r in new_rows("mixed"):
                if r["n"] == o["n"]:
                    key = "tf32" if r["variant"] == "tf32" else "fp32"
                    add("large_bench", case, f"posv_mixed {key} ms", o[key]["seconds"] * 1e3, r.get("time_ms"))
                    if key == "fp32":
                        add("large_bench", case, "cuSOLVER FP64 potrf+potrs ms", o["cusolver_potrf_potrs_seconds"] * 1e3, ref_ms(r, "cusolver"))

    old = load("old", "ldlt")
    for o in (old or {}).get("rows", []):
        case = f"{o['precision']} n={o['n']}"
        name = o["routine"]
        for r in new_rows("ldlt", "nopiv"):
            if r["precision"] != o["precision"] or r["n"] != o["n"]:
                continue
            if name == "sytrf_nopiv" and r["routine"] == "sytrf_nopiv":
                add("sysv_bench", case, name + " ms", o["ms"], r.get("time_ms"))
            elif name in ("sysv_mixed", "sysv_mixed_tf32") and r["routine"] == "sysv_mixed" and \
                    r["variant"] == ("tf32" if name.endswith("tf32") else ""):
                add("sysv_bench", case, name + " ms", o["ms"], r.get("time_ms"))
            elif r["routine"] == ("sysv_mixed" if name.endswith("gesv") else "sytrf_nopiv") and r["variant"] == "" and \
                    ("cusolver:" + name) in r.get("refs", {}):
                add("sysv_bench", case, name + " ms", o["ms"], ref_ms(r, "cusolver:" + name))

    old = load("old", "tri")
    names = {"trsm_square": ("trsm_vbatched", "square"), "trsm_chol": ("trsm_vbatched", "chol"),
             "trmm": ("trmm_vbatched", ""), "potrf": ("potrf_vbatched", "")}
    for o in (old or {}).get("rows", []):
        if o["routine"] not in names or o["method"].startswith("uniform") or o["method"].startswith("cpu"):
            continue
        routine, setup = names[o["routine"]]
        case = f"{o['routine']} {o['precision']} x={o['x']}"
        for r in new_rows("tri"):
            if r["routine"] != routine or r["n"] != o["x"] or r["precision"] != o["precision"] or \
                    r["detail"].get("setup") != o["routine"]:
                continue
            m = o["method"]
            if m == "ours" and r["variant"] == "":
                add("vbatched_triangular_bench", case, "ours ms", o["ms"], r.get("time_ms"))
            elif m == "ours recursive" and r["variant"] == "recursive":
                add("vbatched_triangular_bench", case, "ours recursive ms", o["ms"], r.get("time_ms"))
            elif m == "ours inversion" and r["variant"] == "inversion":
                add("vbatched_triangular_bench", case, "ours inversion ms", o["ms"], r.get("time_ms"))
            elif m == "cublas 16 streams" and r["variant"] == "":
                peer = "cublas" if routine == "trmm_vbatched" else "cublas-streams"
                add("vbatched_triangular_bench", case, "cuBLAS 16 streams ms", o["ms"], ref_ms(r, peer))
            elif m.startswith("cusolver") and r["variant"] == "":
                add("vbatched_triangular_bench", case, "cuSOLVER per size ms", o["ms"], ref_ms(r, "cusolver"))

    old = load("old", "vb")
    for o in (old or {}).get("rows", []):
        case = f"{o['routine']} {o['precision']} x={o['x']}"
        for r in new_rows("vb"):
            if r["detail"].get("setup") == o["routine"] and r["precision"] == o["precision"] and r["n"] == o["x"]:
                g = r["detail"]["gflops"]
                add("vbatched_bench", case, "ours GFLOP/s", o["gflops"]["ours"], g["ours"])
                if o["gflops"].get("cublas_grouped"):
                    add("vbatched_bench", case, "cuBLAS grouped GFLOP/s", o["gflops"]["cublas_grouped"], g["cublas_grouped"])
                add("vbatched_bench", case, "cuBLAS 16 streams GFLOP/s", o["gflops"]["cublas_streams"], g["cublas_streams"])

    old = load("old", "multi")
    for o in (old or {}).get("rows", []):
        case = f"{o['precision']} n={o['n']} {o['mode']} devices={o['devices']}"
        for r in new_rows("multi"):
            if r["precision"] == o["precision"] and r["n"] == o["n"] and r["variant"] == o["mode"] and \
                    r["detail"].get("devices") == o["devices"]:
                add("multi_bench", case, "posv s", o["seconds"], r.get("time_ms", 0) * 1e-3)

    old = load("old", "cpu")
    for o in (old or {}).get("rows", []):
        case = f"{o['routine']} {o['precision']} n={o['n']}"
        for r in new_rows("cpu"):
            if r["routine"] == o["routine"] and r["precision"] == o["precision"] and r["n"] == o["n"]:
                m = o["methods"]
                add("cpu_small_bench", case, "CPU backend ms", m["batchsolve"]["seconds"] * 1e3, r.get("time_ms"))
                add("cpu_small_bench", case, "LAPACKE all threads ms", m["lapacke_omp"]["seconds"] * 1e3, ref_ms(r, "lapack"))
                add("cpu_small_bench", case, "LAPACKE one thread ms", m["lapacke_1thread"]["seconds"] * 1e3, ref_ms(r, "lapack1"))

rounds = sorted((d for d in os.listdir(os.path.join(out, "old")) if d.startswith("r") and
                 (os.listdir(os.path.join(out, "old", d)) or os.listdir(os.path.join(out, "new", d)))),
                key=lambda d: int(d[1:]))  # the rounds that ran (a round the budget cut has no files)
for ROUND in rounds:
    match_round()
print(f"Rounds: {len(rounds)} (old and tester interleaved); each cell the median over the rounds, "
      "spread = max/min - 1 over the rounds of that side.\n")
print("| bench | case | figure | old | tester | tester / old | within 5% | spread old | spread tester |")
print("|---|---|---|---|---|---|---|---|---|")
within = total = 0
summary = []
fmt = lambda v: f"{v:.4g}" if isinstance(v, (int, float)) else "-"
spread = lambda v: f"{max(v) / min(v) - 1:.1%}" if len(v) > 1 and min(v) > 0 else "-"
for (bench, case, figure), (o, n) in rows.items():
    mo = statistics.median(o) if o else None
    mn = statistics.median(n) if n else None
    ok = mo is not None and mn is not None and mo > 0
    ratio = mn / mo if ok else None
    good = bool(ok and 0.95 <= ratio <= 1.05)
    total += 1
    within += good
    summary.append({"bench": bench, "case": case, "figure": figure, "old_median": mo, "tester_median": mn,
                    "ratio": ratio, "within_5pct": good, "old_rounds": o, "tester_rounds": n})
    print(f"| {bench} | {case} | {figure} | {fmt(mo)} | {fmt(mn)} | {fmt(ratio)} | {'yes' if good else 'NO'} | "
          f"{spread(o)} | {spread(n)} |")
print(f"\n{within} of {total} figures within 5%")
# A figure that its own bench does not repeat within 5% over the rounds (or the tester does not) cannot
# show agreement at 5%: counted apart, so that a noisy host reads as noise and not as a disagreement.
def repeats(v): return len(v) > 1 and min(v) > 0 and max(v) / min(v) - 1 <= 0.05
steady = [e for e in summary if repeats(e["old_rounds"]) and repeats(e["tester_rounds"])]
steady_within = sum(e["within_5pct"] for e in steady)
print(f"{len(steady)} figures repeat within 5% on both sides over the rounds; {steady_within} of them agree within 5%")
with open(os.path.join(out, "fold.json"), "w") as f:
    json.dump({"rounds": len(rounds), "within": within, "total": total, "steady": len(steady),
               "steady_within": steady_within, "figures": summary}, f, indent=1)
# targets.json: one line per bench and side (our rows, the peers'), each met when every figure agrees.
counts = {}
for e in summary:
    side = "ours" if e["figure"].startswith(("ours", "CPU backend", "potrf ours", "multi_posv")) else "peers"
    c = counts.setdefault((e["bench"], side), [0, 0])
    c[0] += e["within_5pct"]; c[1] += 1
binding = os.environ.get("OMP_PROC_BIND", "unset")
with open(os.path.join(out, "targets.json"), "w") as f:
    json.dump([{"target": f"{b} {side}: tester median within 5% of the old bench's ({len(rounds)} interleaved "
                          f"rounds, OMP_PROC_BIND={binding})",
                "measured": f"{w} of {t}", "met": w == t, "basis": "fold.json"}
               for (b, side), (w, t) in counts.items()], f, indent=1)
PY
[[ -f $out/skipped.txt ]] && { echo "skipped:"; cat "$out/skipped.txt"; }
exit 0
