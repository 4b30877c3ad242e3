#!/usr/bin/env bash
# GPU checks and benchmarks of the BEM application, for the GPU machine (repository root as working
# directory, the bundle unpacked at /tmp/bundle, results under $OUT/bem/; about 3-4 minutes):
#   1. the GPU tests (CPU/GPU assembly agreement, GPU solvers, GPU sphere vs Mie) and the CPU scattering tests
#   2. bem validate with GPU assembly on the bempp-cl comparison spheres (far-field error vs Mie),
#      sound-soft P0 and sound-hard P1 (Maue)
#   3. bem bench on the head mesh (P0 n = 17,432; 1, 3 and 7 kHz): GPU assembly time against the
#      0.25 s target, CPU/GPU agreement on 64 rows, symmetry, cuSOLVER LU / ZCgesv / ZYgesv with
#      residuals, gpu-ldlt (the library's mixed LDL^T), P1 W assembly time; and on the 8,192-triangle octasphere
# Files (at most 6): tests.txt, validate_gpu.csv, bench_head.json, bench_sphere.json, summary.md, log.txt
# BEM_BUDGET_S (default 420) bounds the whole run: a step that would start past its share is skipped;
# BEM_HEAD_FREQUENCIES (default 1000,3000,7000) and BEM_REPEAT (default 3) size the head bench.
set -uo pipefail
budget=${BEM_BUDGET_S:-420}
head_frequencies=${BEM_HEAD_FREQUENCIES:-1000,3000,7000}
repeat=${BEM_REPEAT:-3}
bundle=${BUNDLE_DIR:-/tmp/bundle}
out=${OUT:?set OUT}/bem
mkdir -p "$out"
run() { "$bundle/run" "$@"; }
# The bundle's commit when the caller knows it (the GPU machine's copy may carry a stale .git).
export BEM_COMMIT=${BEM_COMMIT:-${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}}
exec > >(tee "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
start=$SECONDS

echo "== 1. tests"
timeout $(( budget / 3 )) "$bundle/run" test_bem_acoustics --gtest_filter='Gpu.*:Scattering.*:Solver.*:Assembly.*' > "$out/tests.txt" 2>&1
echo "tests rc=$? ($(grep -c '^\[       OK' "$out/tests.txt") passed, $(grep -c '^\[  FAILED  \] [A-Z].*ms)$' "$out/tests.txt") failed, $(grep -c '^\[  SKIPPED \] [A-Z].*ms)$' "$out/tests.txt") skipped)"

left() { echo $(( budget - (SECONDS - start) )); }
step_limit() { local want=$1 l; l=$(left); (( l < want )) && want=$l; (( want < 10 )) && want=0; echo "$want"; }

echo "== 2. validate (GPU assembly, bempp-cl comparison spheres)"
t=$(step_limit 100); (( t > 0 )) && timeout "$t" "$bundle/run" bem validate --assembly gpu --meshes gmsh:0.198,gmsh:0.0992,gmsh:0.0688,octa:5 -k 3.4,6.6,9.4,10.6 --csv "$out/validate_gpu.csv"

t=$(step_limit 40); (( t > 0 )) && timeout "$t" "$bundle/run" bem validate --formulation hard-p1 --assembly gpu --meshes gmsh:0.0992,octa:5 -k 6.6,10.6

echo "== 3. bench"
head=""
# The head mesh is shared data, never committed: BEM_HEAD_MESH, or a copy carried in the git-ignored
# build-data/ (cp ../shared/data/meshes/mesh2hrtf_head_16kHz.ply build-data/), or ../shared beside the checkout.
for p in ${BEM_HEAD_MESH:-} build-data/mesh2hrtf_head_16kHz.ply ../shared/data/meshes/mesh2hrtf_head_16kHz.ply \
         shared/data/meshes/mesh2hrtf_head_16kHz.ply /work/shared/data/meshes/mesh2hrtf_head_16kHz.ply; do
  [[ -f $p ]] && head=$p && break
done
if [[ -n $head ]]; then
  t=$(step_limit 200); (( t > 0 )) && timeout "$t" "$bundle/run" bem bench --mesh "$head" --unit mm -f "$head_frequencies" --repeat "$repeat" --json "$out/bench_head.json"
else
  echo "head mesh not found (BEM_HEAD_MESH, build-data/, ../shared/data/meshes/): bench on the icosphere of 20,480 triangles instead"
  t=$(step_limit 200); (( t > 0 )) && timeout "$t" "$bundle/run" bem bench --mesh ico:5 -f 200,400 --repeat "$repeat" --json "$out/bench_head.json"
fi
t=$(step_limit 60); (( t > 0 )) && timeout "$t" "$bundle/run" bem bench --mesh octa:5 -f 580 --repeat "$repeat" --json "$out/bench_sphere.json"

python3 - "$out" <<'PY' | tee "$out/summary.md"
import json, os, sys
out = sys.argv[1]
print("# bem GPU run\n")
for name in ("bench_head.json", "bench_sphere.json"):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        print(f"{name}: missing\n"); continue
    b = json.load(open(path))
    print(f"## {b['mesh']} ({b['triangles']} triangles) on {b.get('device', '?')}, commit {b['commit']}, {b['date']}\n")
    print("| f Hz | assembly s (target 0.25) | regular | singular | mirror | CPU/GPU diff | solver | time s | scaled residual | iterations |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in b.get("runs", []):
        a = r["assembly"]
        for s in r.get("solvers", []):
            print(f"| {r['frequency_hz']:.0f} | {a['total_s']:.4f} | {a['regular_s']:.4f} | {a['singular_s']:.4f} | {a['mirror_s']:.4f} | "
                  f"{r.get('cpu_gpu_max_rel_diff', float('nan')):.1e} | {s['solver']} | {s.get('seconds', float('nan')):.4f} | "
                  f"{s.get('scaled_residual', float('nan')):.2e} | {s.get('iterations', '')} {s.get('error', '')} |")
    print()
path = os.path.join(out, "validate_gpu.csv")
if os.path.exists(path):
    print("## sphere vs Mie, GPU assembly\n\n```\n" + open(path).read() + "```")
PY
echo "bem gpu-run: done in $((SECONDS - start)) s"
