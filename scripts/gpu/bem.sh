#!/usr/bin/env bash
# bem on one H200 (about 200 s): the device-resident pipeline of `bem solve --assembly gpu` on a P1
# sphere of n = 32,492 (geo:57, soft and hard, gpu-ldlt), P0 spheres of n = 32,000 and 64,980
# (geo:40, geo:57, gpu-ldlt), and Burton-Miller against the single-operator equations at the unit
# sphere's first interior eigenvalues (soft: ka = pi; hard: ka = 2.0816) on CPU-assembled spheres.
# Wall seconds, stage times, peak host/device memory and the far-field error against Mie go to
# $OUT/bem/summary.csv (and the console table last); every run's console is $OUT/bem/<case>.log.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/bem; mkdir -p "$out"
run=/tmp/bundle/run
prog=bem_gpu; [[ -x /tmp/bundle/bin/bem_gpu ]] || prog=bem
budget=${BEM_BUDGET_S:-190}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv | tee "$out/gpu.txt"
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
echo "case,formulation,mesh,k,n,rc,wall_s,assembly_s,assembly_kernels_s,element_pairs_per_s,solve_s,residual_s,outputs_s,peak_host_gib,peak_device_gib,scaled_residual,rcond,mie_far_error,mie_surface_error,path" > "$out/summary.csv"

# case name, seconds allowed, then the bem solve arguments.
solve_case() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 10 )) && { echo "$name: skipped (budget)"; echo "$name,,,,,skipped,,,,,,,,,,,,,," >> "$out/summary.csv"; return; }
  (( limit > l )) && limit=$l
  local t0=$EPOCHREALTIME
  timeout -k 5 "$limit" "$run" "$prog" solve "$@" -o "/tmp/bem-$name" --force --angles 361 > "$out/$name.log" 2>&1
  local rc=$? t1=$EPOCHREALTIME
  python3 - "$out/$name.log" "$name" "$rc" "$t0" "$t1" "$@" >> "$out/summary.csv" <<'PY'
import re, sys
log, name, rc, t0, t1, args = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6:]
text = open(log, errors="replace").read()
def arg(flag, default=""):
    return args[args.index(flag) + 1] if flag in args else default
def num(pattern, where=text):
    m = re.search(pattern, where)
    return m.group(1) if m else ""
stages = num(r"(  stages:[^\n]*)")
kline = num(r"(\nk = [^\n]*)")
path = num(r"; ([^;]*?): (?:[\d.]+ s, )?scaled residual", kline).replace('"', "'")
row = [name, arg("--formulation", "soft-p0"), arg("--mesh"), arg("-k"), num(r"n = (\d+)", kline), rc, "%.2f" % (t1 - t0),
       num(r"assembly ([\d.]+) s", stages), num(r"kernels ([\d.]+) s", stages), num(r"([\d.e+-]+) element pairs/s", stages),
       num(r"solve ([\d.]+) s", stages), num(r"residual ([\d.]+) s", stages), num(r"outputs ([\d.]+) s", stages),
       num(r"host ([\d.]+) GiB", stages), num(r"device ([\d.]+) GiB", stages), num(r"scaled residual ([\d.e+-]+)", kline),
       num(r"rcond ([\d.e+-]+)", kline), num(r"far field vs Mie[^:]*: relative L2 error ([\d.e+-]+)"),
       num(r"vs Mie: relative L2 error ([\d.e+-]+)"), '"' + path + '"']
print(",".join(str(c) for c in row))
PY
  tail -n 4 "$out/$name.log"
}

part=${BEM_PART:-all}  # scale: the at-scale runs only (scripts/gpu/bem-scale.sh)
# The GPU tests of the pipeline and the assembly (CUDA device vs the host path, GPU vs CPU matrices).
if [[ $part == all && -x /tmp/bundle/bin/test_bem_acoustics ]]; then
  timeout -k 5 40 "$run" test_bem_acoustics --gtest_filter='Gpu.*:Pipeline.Cuda*' > "$out/gpu-tests.log" 2>&1
  echo "gpu tests: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ')"
fi
# The device-resident pipeline (matrix never on the host).
solve_case p1-soft-geo57 35 --mesh geo:57 --formulation soft-p1 -k 20 --mie-radius 1 --assembly gpu --solver gpu-ldlt
solve_case p1-hard-geo57 35 --mesh geo:57 --formulation hard-p1 -k 20 --mie-radius 1 --assembly gpu --solver gpu-ldlt
solve_case p0-soft-geo40 25 --mesh geo:40 -k 20 --mie-radius 1 --assembly gpu --solver gpu-ldlt
solve_case p0-soft-geo57 55 --mesh geo:57 -k 20 --mie-radius 1 --assembly gpu --solver gpu-ldlt
if [[ $part == all ]]; then
# The memory plan refusing a system above one GPU (P0 geo:80, n = 128,000: 244 GiB of A alone).
timeout 20 "$run" "$prog" solve --mesh geo:80 -k 20 --assembly gpu --solver gpu-ldlt -o /tmp/bem-refuse --force > "$out/refuse-geo80.log" 2>&1
echo "refuse-geo80: rc=$? $(grep -o 'needs.*' "$out/refuse-geo80.log" | head -c 400)"
# Sound-soft at the first interior Dirichlet eigenvalue: ka = pi, and near it where the 5,120-triangle
# polyhedron's own eigenvalue lies (about 3.1505 on ico:3, the shift falling as h^2): the single layer
# and Burton-Miller, both through the GPU pipeline (gpu-lu), over a few k; Burton-Miller once with the
# CPU assembly too (the combined operator of the CPU path). Sound-hard at ka = 2.0816 (first zero of
# j_1') and near it, both on the GPU.
for k in 3.14159265 3.1434 3.1438 3.1442; do
  solve_case "soft-sl-ico4-k$k" 12 --mesh ico:4 --formulation soft-p0 -k "$k" --mie-radius 1 --assembly gpu --solver gpu-lu
  solve_case "soft-bm-ico4-k$k" 12 --mesh ico:4 --formulation soft-p0-bm -k "$k" --mie-radius 1 --assembly gpu --solver gpu-lu
done
solve_case "soft-bm-cpu-ico4-k3.14159265" 25 --mesh ico:4 --formulation soft-p0-bm -k 3.14159265 --mie-radius 1 --solver gpu-lu
for k in 2.0816 2.0840; do
  solve_case "hard-w-ico4-k$k" 12 --mesh ico:4 --formulation hard-p1 -k "$k" --mie-radius 1 --assembly gpu --solver gpu-lu
  solve_case "hard-bm-ico4-k$k" 12 --mesh ico:4 --formulation hard-p1-bm -k "$k" --mie-radius 1 --assembly gpu --solver gpu-lu
done
fi

echo
echo "== bem on $(head -1 "$out/gpu.txt" >/dev/null; sed -n 2p "$out/gpu.txt" | cut -d, -f1), commit $(cat "$out/commit.txt") =="
echo "before (issue's user run, BASELINES.md): soft-p1 n = 32,870: wall 21.6 s, peak host 17.4 GB; soft-p0 n = 65,736: wall 110 s, peak host 68.0 GB"
cut -d, -f1,5,6,7,9,10,11,12,13,14,15,16,18,19 "$out/summary.csv" | sed 's/,/  /g' 
