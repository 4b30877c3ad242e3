#!/usr/bin/env bash
# posv_mixed on one H200: our mixed-precision SPD solver (tensor-core FP16 / BF16 / TF32 / split-FP16
# factors, classical and GMRES-based refinement, two ways of applying the factor) beside cuSOLVER's FP64
# Xpotrf + Xpotrs and its LU-based mixed-precision solvers (DSgesv, DHgesv, DBgesv, DXgesv, IRSXgesv
# with GMRES), on A = Q diag(lambda) Q^T of condition 1e2, 1e4, 1e6, 1e8, in one tester run per n.
# MIXED_NS (default 8192,16384) the orders; MIXED_VARIANTS=1 (default) adds a row per design beside the
# automatic one; MIXED_TARGETS (a targets JSON) makes the tester write targets.json.
# At most MIXED_BUDGET_S (80) s; writes $OUT/mixed/ (gpu.txt, commit.txt, mixed.json, mixed.log,
# targets.json when asked, summary.md); the summary table last.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed; mkdir -p "$out"
run=/tmp/bundle/run
budget=${MIXED_BUDGET_S:-80}; start=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$out/commit.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
ns=${MIXED_NS:-8192,16384}
args=(--routine posv_mixed --precision d --n "$ns" --repeat "${MIXED_REPEAT:-3}" --warmup 1 --seed 36
      --ref cusolver,cusolver-irs --json "$out/mixed.json")
[[ ${MIXED_VARIANTS:-1} == 1 ]] && args+=(--all-variants)
[[ -n ${MIXED_TARGETS:-} ]] && args+=(--targets "$MIXED_TARGETS" --targets-out "$out/targets.json")
limit=$((budget - (SECONDS - start) - 8))
echo "== tester ${args[*]} ($limit s)"
timeout -k 3 "$limit" "$run" tester "${args[@]}" > "$out/mixed.log" 2>&1
echo "   rc $? after $((SECONDS - start)) s"
tail -n 3 "$out/mixed.log"
python3 - "$out" <<'PY' | tee "$out/summary.md"
import json, sys
out = sys.argv[1]
try:
    rows = json.load(open(out + "/mixed.json"))["rows"]
except Exception as e:
    print("no mixed.json:", e); sys.exit(0)
print("| n | variant | ms | vs Xpotrf+Xpotrs | vs fastest IRS | error (units of u max(sqrt n,4)) | path | it | inner | status |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    refs = r.get("refs", {})
    sp = lambda k: ("%.2f" % refs[k]["speedup"]) if k in refs and refs[k].get("speedup") is not None else "-"
    d = r.get("detail", {})
    err = r.get("error"); err = "%.2f" % err if isinstance(err, (int, float)) else "-"
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["n"], r.get("variant", ""),
          "%.2f" % r["time_ms"] if "time_ms" in r else "-", sp("cusolver"), sp("cusolver-irs-best"), err,
          d.get("path", "-"), d.get("iterations", "-"), d.get("inner_iterations", "-"), r["status"]))
peers = {}
for r in rows:
    for k, v in r.get("refs", {}).items():
        if v.get("ran"): peers.setdefault((r["n"], r.get("variant", "").split("/")[0], k), (v["time_ms"], v.get("error"), v.get("note", "")))
print()
print("| n | cond | peer | ms | error | note |")
print("|---|---|---|---|---|---|")
for (n, c, k), (ms, e, note) in sorted(peers.items()):
    print("| %s | %s | %s | %.2f | %s | %s |" % (n, c, k, ms, "%.2f" % e if isinstance(e, (int, float)) else "-", note))
PY
echo "mixed: done after $((SECONDS - start)) s"
