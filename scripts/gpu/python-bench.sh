#!/usr/bin/env bash
# The Python bench like for like on one H200 (about 160 s): python -m batchsolve.bench, potrf and posv,
# s and d, n = 8..128, batch 16384 and 100000, against torch.linalg.cholesky_ex allocating (our plain
# call) and with out= (our in-place call), torch.linalg.cholesky, CuPy and JAX (synchronised once per
# round), plus the C++ loop (docs/benchmarking.md). Files: $OUT/python-bench/python/bench.{json,md,png}
# (python/scripts/gpu-check.sh); the table of like-for-like ratios last.
# Run from the repository root with the bundle unpacked at /tmp/bundle. The extension is the bundle's
# bin/_batchsolve.cpython-312-*.so (a GPU build configured with -DPython_EXECUTABLE=python3.12), or
# .py-gpu/ carried (python/scripts/build-gpu-module.sh); without either the script says so and stops.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/python-bench; mkdir -p "$out"
tag=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
if [[ ! -f /tmp/bundle/bin/_batchsolve$tag && ! -f .py-gpu/batchsolve/_batchsolve$tag ]]; then
  echo "python-bench: no extension for this Python ($tag): neither /tmp/bundle/bin/_batchsolve$tag nor .py-gpu/ (carry it)"
  exit 2
fi
OUT=$out BENCH_SECONDS=${BENCH_SECONDS:-120} bash python/scripts/gpu-check.sh bench \
  --routine potrf,posv --precision s,d --n 8,16,32,64,128 --batch 16384,100000
rc=$?
python3 - "$out/python/bench.json" <<'PY'
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
PY
exit $rc
