#!/usr/bin/env bash
# Several-device paths on ONE GPU in one short call (<= 90 s): the paths that need several GPUs, run on a
# DeviceGroup of the one GPU, beside the one-GPU paths they must agree with.
#  1. BEM: bem_multi_check (the bem code without Gmsh; or bem solve --devices 0 where bem is in the
#     bundle): column-block assembly into cuSOLVERMg's tiles, cuSOLVERMg LU with one device, residual
#     from the re-assembled columns, vs the one-GPU solve (GPU assembly, cuSOLVER LU), P0 on ico:5
#     (n = 20,480) and P1 sound-hard on ico:5 (n = 10,242): time, scaled residual, Mie error, the two
#     solutions' difference; and a member cap below the matrix: the clear error.
#  2. ALS: a rating set sized from a (simulated) 330 MiB device by als generate --fill-memory 1.05; one
#     partition refused under the cap, two partitions on the GPU (--devices 0,0 --partitions fit)
#     against one engine without the cap (compare_models).
#  3. The GPU tests of these paths (DistributedGpu, MultiDense tiled/cuSOLVERMg), mpirun -np 1 posv on
#     the rank's GPU when mpirun exists.
# Results: $OUT/multi/{log.txt, summary.md}. Usage: OUT=... bash libsolver/scripts/multi-gpu-one.sh
set -uo pipefail
out=${OUT:?OUT must name the output folder}/multi
mkdir -p "$out"
R=${MULTI_RUN:-/tmp/bundle/run}
log=$out/log.txt
: > "$log"
start=$(date +%s)
budget=${MULTI_BUDGET:-85}
export NCCL_NVLS_ENABLE=0
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
say() { echo "$@" | tee -a "$log"; }
left() { echo $(( budget - ($(date +%s) - start) )); }
# step WANTED NAME COMMAND...: COMMAND under a timeout of min(WANTED, what is left - 4), its output in
# the log; skipped (said so) when fewer than 3 s are left.
step() {
    local want=$1 name=$2; shift 2
    local l=$(( $(left) - 4 )); (( l > want )) && l=$want
    if (( l < 3 )); then say "skipped (budget): $name"; return 99; fi
    local t0=$(date +%s.%N)
    say "== $name (limit ${l} s)"
    timeout "$l" "$@" > /tmp/multi-step.txt 2>&1; local rc=$?
    cat /tmp/multi-step.txt >> "$log"
    say "   exit $rc, $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s wall"
    return $rc
}
say "# several-device paths on one GPU, commit $commit, $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader 2>&1 | tee -a "$log"

# ---- 1. BEM: the multi-device path on a group of one GPU vs the one-GPU path ----------------------
# bem_multi_check (no Gmsh needed) when the bundle has it; the full bem when it has that instead.
bem_rows=()
cap_line=""
if [[ -x /tmp/bundle/bin/bem_multi_check || -n ${MULTI_RUN:-} ]] && step 45 "bem_multi_check ico:5 P0 + hard-P1, k = 5, cap 4 GiB" \
        $R bem_multi_check --mesh ico:5 -k 5 --formulations soft-p0,hard-p1 --devices 0 --tile 256 --cap-gib 4; then :; fi
if grep -q "^bem_multi_check" /tmp/multi-step.txt 2>/dev/null; then
    while IFS= read -r line; do bem_rows+=("$line"); done < <(grep " summary: \| n = \|^cap \|^bem_multi_check" /tmp/multi-step.txt)
elif [[ -x /tmp/bundle/bin/bem ]]; then
    B=/tmp/multi-bem; rm -rf $B
    bem() {  # NAME ARGS...: one bem solve, its result line kept for the summary
        local name=$1; shift
        step 25 "bem $name" $R bem solve --mesh ico:5 -k 5 --mie-radius 1 --angles 181 -o $B/$name --force "$@"
        local rc=$?
        bem_rows+=("$name|$rc|$(grep -m1 '^k = ' /tmp/multi-step.txt)|$(grep -m1 'far field vs Mie' /tmp/multi-step.txt)")
    }
    bem p0-multi --assembly gpu --devices 0 --tile 256
    bem p0-one --assembly gpu --solver gpu-lu
    bem p1-multi --formulation hard-p1 --assembly gpu --devices 0 --tile 128
    bem p1-one --formulation hard-p1 --assembly gpu --solver gpu-lu
    step 10 "bem cap: n = 20,480 (6.25 GiB) on a member capped at 4 GiB" $R bem solve --mesh ico:5 -k 5 --assembly gpu --devices 0 \
        --device-memory-gib 4 -o $B/cap --force
    cap_line=$(grep -m1 "does not fit\|error" /tmp/multi-step.txt)
else
    say "BEM: neither bem_multi_check nor bem in the bundle: BEM rows skipped"
fi

# ---- 2. ALS: a set larger than a (simulated) device, two partitions on the GPU ---------------------
A=/tmp/multi-als; rm -rf $A; mkdir -p $A
als_common=(--factors 64 --slice-mb 16 --iterations 3 --seed 7 --backend cuda --no-loss --force)
step 25 "als generate --fill-memory 1.05 --device-memory-mb 330" $R als generate -o $A/r.h5 --force --fill-memory 1.05 \
    --device-memory-mb 330 --factors 64 --slice-mb 16 --users 100000 --items 10000 --interactions 5000000 --seed 3
gen_line=$(grep -m1 "^generated" /tmp/multi-step.txt)
step 12 "als train, one partition under the 330 MiB cap (must be refused)" $R als train --train $A/r.h5 -o $A/refused.h5 \
    "${als_common[@]}" --devices 0 --device-memory-mb 330
refused_line=$(grep -m1 "do not fit" /tmp/multi-step.txt)
step 30 "als train, --devices 0,0 --partitions fit under the cap" $R als train --train $A/r.h5 -o $A/two.h5 "${als_common[@]}" \
    --devices 0,0 --partitions fit --device-memory-mb 330
two_lines=$(grep "^iter\|^device memory\|^backend" /tmp/multi-step.txt | tr '\n' ' ')
step 25 "als train, one engine without a cap" $R als train --train $A/r.h5 -o $A/one.h5 "${als_common[@]}"
one_lines=$(grep "^iter\|^backend" /tmp/multi-step.txt | tr '\n' ' ')
step 8 "compare_models two partitions vs one engine" $R compare_models $A/two.h5 $A/one.h5 1e-3
cmp_line=$(grep -m1 "relative difference" /tmp/multi-step.txt)

# ---- 3. the GPU tests of these paths; one rank per GPU under mpirun ---------------------------------
bem_test="not in the bundle"
if [[ -x /tmp/bundle/bin/test_bem_acoustics ]]; then
    step 20 "test_bem_acoustics DistributedGpu" $R test_bem_acoustics --gtest_filter='DistributedGpu.*' --gtest_brief=1
    bem_test=$(grep -m1 "PASSED\|FAILED" /tmp/multi-step.txt)
fi
step 20 "batchsolve_multi_device_test MultiDense (cuSOLVERMg, tiled)" $R batchsolve_multi_device_test --gtest_filter='MultiDense*' --gtest_brief=1
dense_test=$(grep -m1 "PASSED\|FAILED" /tmp/multi-step.txt)
mpi_line="mpirun absent"
if command -v mpirun > /dev/null; then
    step 15 "mpirun -np 1 mpi_posv cuda (rank 0 on GPU local rank % GPUs)" mpirun --allow-run-as-root --oversubscribe -np 1 \
        -x LD_LIBRARY_PATH=/tmp/bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} /tmp/bundle/bin/batchsolve_mpi_posv 7 20001 16 cuda
    mpi_line=$(grep "^mpi_posv" /tmp/multi-step.txt | tr '\n' ' ')
fi

# ---- summary -------------------------------------------------------------------------------------
{
    echo "# Several-device paths on one GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)), commit $commit, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "## BEM, ico:5, k = 5: DeviceGroup of one GPU (column tiles, cuSOLVERMg) vs one GPU (cuSOLVER)"
    echo
    for r in "${bem_rows[@]}"; do echo "- ${r}"; done
    echo "- cap: ${cap_line:-no error line}"
    echo
    echo "## ALS, set sized for 1.05 x 330 MiB (k = 64, slices of 16 MiB)"
    echo
    echo "- ${gen_line:-generation failed}"
    echo "- one partition under the cap: ${refused_line:-NOT refused}"
    echo "- two partitions: ${two_lines}"
    echo "- one engine: ${one_lines}"
    echo "- ${cmp_line:-no comparison}"
    echo
    echo "## Tests"
    echo
    echo "- DistributedGpu: ${bem_test:-not run}; MultiDense: ${dense_test:-not run}"
    echo "- mpirun: ${mpi_line}"
    echo
    echo "$(( $(date +%s) - start )) s in all"
} > "$out/summary.md"
cat "$out/summary.md"
