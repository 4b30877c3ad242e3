#!/usr/bin/env bash
# The Python bench like for like on one H200, within TOPIC_BUDGET_S (default 40 s): python -m
# batchsolve.bench, potrf and posv, s and d, n = 8..128 at batch PY_BENCH_BATCH (default 16384: the
# python README's table; 100000 as well takes about 35 s more), against torch.linalg.cholesky_ex
# allocating (our plain call) and with out= (our in-place call), torch.linalg.cholesky, CuPy and JAX
# (synchronised once per round), plus the C++ loop (docs/benchmarking.md). About 10 s go to start-up
# (import of torch, CuPy, JAX; the module's first NVRTC compiles), the rest to the cases (about 0.7 s
# each at batch 16384 with --repeat 3): the bench starts no case after BENCH_SECONDS = budget - 12.
# Files: $OUT/python-bench/python/bench.{json,md,png} and targets.json (overhead <= 10 us at batch 16384,
# kept >= 0.90, per case, written by the bench), python/scripts/gpu-check.sh's log; the table of
# like-for-like ratios last.
# Run from the repository root with the bundle unpacked at /tmp/bundle. The extension is the bundle's
# bin/_batchsolve.cpython-312-*.so (a GPU build configured with -DPython_EXECUTABLE=python3.12), or
# .py-gpu/ carried (python/scripts/build-gpu-module.sh, with .whl-python); torch, CuPy and JAX are in the
# GPU machine's image (KINDS.md), so no peer wheels travel. Without an extension it says so and stops.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/python-bench; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-40}
bench_seconds=${BENCH_SECONDS:-$(( budget > 24 ? budget - 12 : 12 ))}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
tag=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
if [[ ! -f /tmp/bundle/bin/_batchsolve$tag && ! -f .py-gpu/batchsolve/_batchsolve$tag ]]; then
  echo "python-bench: no extension for this Python ($tag): neither /tmp/bundle/bin/_batchsolve$tag nor .py-gpu/ (carry it)"
  exit 2
fi
OUT=$out BENCH_SECONDS=$bench_seconds bash python/scripts/gpu-check.sh bench \
  --routine potrf,posv --precision s,d --n 8,16,32,64,128 --batch "${PY_BENCH_BATCH:-16384}" \
  --repeat "${PY_BENCH_REPEAT:-3}" --targets-out "$out/python/targets.json" > "$out/gpu-check.log" 2>&1
rc=$?
tail -n 12 "$out/gpu-check.log"
python3 - "$out/python/bench.json" "$out/python/targets.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"python-bench: no bench.json ({e})")
print(f"== like for like ({d['meta']['device']}, {d['meta']['commit']}): peer time / ours")
print(f"{'case':26} {'alloc/alloc':>11} {'out=/inplace':>12} {'cholesky':>9} {'cupy':>7} {'jax':>7} {'ok':>4}")
for r in d["rows"]:
    ours = r["python_new_us"]
    f = lambda k: f"{r[k] / ours:.2f}" if k in r else "-"
    print(f"{r['routine']} {r['precision']} n={r['n']:<4} b={r['batch']:<7} {r.get('speedup_alloc', float('nan')):11.2f} "
          f"{r.get('speedup_inplace', float('nan')):12.2f} {f('torch_us'):>9} {f('cupy_us'):>7} {f('jax_us'):>7} {str(r['ok']):>4}")
if d.get("not_run"):
    print(f"not run (time limit): {len(d['not_run'])} cases")
try:
    t = json.load(open(sys.argv[2]))
    print(f"targets: {t['met']} of {t['total']} met")
except (OSError, ValueError):
    print("targets: no targets.json")
PY
exit $rc
