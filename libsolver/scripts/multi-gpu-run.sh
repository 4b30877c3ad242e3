#!/usr/bin/env bash
# Several devices on the GPU machine (run from the repository root, bundle at /tmp/bundle, results under
# $OUT/multi/): the multi-device tests, batched posv on 1 vs N GPUs (tester multi_posv), ALS on 1 vs N GPUs
# (als bench --device-sets) on the ML-20M and Netflix shapes, the MPI path when mpirun is there, a summary.
#   usage: libsolver/scripts/multi-gpu-run.sh [smoke|full|beyond]
#   smoke (1 GPU is enough, < 3 min): probes (mpirun, NCCL, topology), the GPU tests (two ALS
#          partitions on one GPU included), tester multi_posv/multi_gesv and als bench on what the machine has.
#   full  (2+ GPUs, one call: budget 570 s, rows in this order, what the budget leaves out is said):
#          the same at full size (posv 10^6, ALS ML-20M and Netflix k = 64, 128 on 1..N GPUs), then the
#          'beyond' rows, then mpirun -np 2 als train with one rank per GPU.
#   beyond (2+ GPUs, < 8 min): only the rows beyond one GPU: BEM P1 n = 32,492 on 1 and N GPUs, a BEM
#          system larger than one GPU on N GPUs, an ALS set larger than a (capped) device on N GPUs.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): on shared hosts it can take the machine out of service.
set -uo pipefail
mode=${1:-smoke}
out=${OUT:?OUT must name the output folder}/multi
mkdir -p "$out"
R=${MULTI_RUN:-/tmp/bundle/run}
log=$out/log.txt
: > "$log"
say() { echo "$@" | tee -a "$log"; }
start=$(date +%s)
exec 3>&1  # the console, for lines that must not go through a step's output filter
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

say "== machine (commit $commit, $(date -u +%Y-%m-%dT%H:%MZ))"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
nvidia-smi topo -m 2>&1 | head -12 | tee -a "$log"
say "mpirun: $(command -v mpirun || echo absent); MPI libraries: $(ls /usr/lib/x86_64-linux-gnu 2>/dev/null | grep -ci mpi) files"
say "NCCL: $( (ldconfig -p | grep -o 'libnccl.so[.0-9]*' | head -1) || true) $(ls /usr/local/cuda/lib64/libnccl.so* 2>/dev/null | head -1)"
python3 -c "import torch; print('torch NCCL', torch.cuda.nccl.version())" 2>&1 | tail -1 | tee -a "$log"
# Without a system libnccl, als takes the one of the nvidia-nccl wheel torch brings (NCCL_LIBRARY).
if ! ldconfig -p | grep -q libnccl.so.2 && [[ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]]; then
    wheel_nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
    [[ -n $wheel_nccl && -e $wheel_nccl ]] && export NCCL_LIBRARY=$wheel_nccl
fi
say "NCCL for als: ${NCCL_LIBRARY:-libnccl.so.2 on the loader path}"

# Every step gets at most what is left of the budget (MULTI_BUDGET seconds, default 170 smoke / 230
# full), so that the summary always comes out; a step that cannot get its minimum is skipped, said so.
budget=${MULTI_BUDGET:-$([[ $mode == smoke ]] && echo 170 || echo 570)}
scaling=1; [[ $mode == beyond ]] && scaling=0   # the tests, tester multi_* and als bench rows
beyond=0; [[ $mode == full || $mode == beyond ]] && beyond=1
left() { echo $(( budget - ($(date +%s) - start) )); }
# limit WANTED MINIMUM: the seconds the next step may take, or 0 (skip it) when MINIMUM is not left.
limit() { local l; l=$(( $(left) - 8 )); (( l < $2 )) && { echo 0; return; }; (( l < $1 )) && echo $l || echo $1; }
# run_for WANTED MINIMUM COMMAND...: COMMAND under timeout limit(WANTED, MINIMUM), or skipped with a line.
run_for() {
    local l; l=$(limit "$1" "$2"); shift 2
    if (( l == 0 )); then echo "skipped (budget: $(left) s left): ${*:1:3}" | tee -a "$log" >&3; return 0; fi
    timeout "$l" "$@"
}

if ((scaling)); then
say "== GPU tests: multi-device posv and gesv (every GPU), ALS partitions"
timeout 60 $R batchsolve_multi_device_test --gtest_brief=1 2>&1 | tail -8 | tee -a "$log"
timeout 60 $R test_als_distributed --gtest_brief=1 > /tmp/multi-als-tests.txt 2>&1
als_rc=$?
grep -v "^\[ *OK\|RUN" /tmp/multi-als-tests.txt | tail -10 | tee -a "$log"
if [[ $als_rc != 0 ]] && ((gpus >= 2)); then
    export ALS_EXCHANGE=host  # NCCL between the GPUs failed or hung: the benches exchange through the host
    say "ALS tests failed (exit $als_rc): ALS_EXCHANGE=host for the benches below"
fi

# dense: one complex system (BEM's precision) by LU over the GPUs (cuSOLVERMg); 33,000 is the BEM
# P1 size beyond one GPU (17.4 GB in complex double).
if [[ $mode == smoke ]]; then repeat=3; dense=8192; else repeat=5; dense=16384,33000; fi
say "== tester multi_gesv (dense z n = $dense) and multi_posv (batch 10^6, n 16 and 32, s and d), 1..$gpus GPUs"
run_for 45 15 $R tester --routine multi_gesv --n $dense --precision z --devices all --repeat 1 --ref one-device \
    --json "$out/multi_gesv.json" 2>&1 | tee -a "$log" | tail -8
run_for 45 15 $R tester --routine multi_posv --n 16,32 --precision s,d --batch 1000000 --host-batch 100000 \
    --modes device,host --devices all --repeat $repeat --ref one-device --json "$out/multi_posv.json" 2>&1 | tee -a "$log" | tail -16

sets="0"; for ((g = 1; g < gpus; ++g)); do sets="$sets;$(seq -s, 0 $g)"; done
[[ $gpus == 1 ]] && sets="0;0,0"  # one GPU: the partitioned path (two partitions on it, host exchange) beside one engine
if [[ $mode == smoke ]]; then
    say "== als bench ML-20M shape, k = 64, device sets $sets"
    run_for 60 25 $R als bench --shape ml20m --factors-list 64 --iterations 4 --backends cuda --device-sets "$sets" --eval-users 5000 \
        --cpu-max-interactions 0 --seed 20 --work-dir /tmp/multi-ml20m --json "$out/als_ml20m.json" --markdown /tmp/multi-tables-ml20m.md \
        2>&1 | grep "^ours\|^data\|error" | tee -a "$log"
else
    say "== als bench ML-20M shape, k = 64, 128, device sets $sets"
    run_for 50 25 $R als bench --shape ml20m --factors-list 64,128 --iterations 4 --backends cuda --device-sets "$sets" --eval-users 5000 \
        --cpu-max-interactions 0 --seed 20 --work-dir /tmp/multi-ml20m --json "$out/als_ml20m.json" --markdown /tmp/multi-tables-ml20m.md \
        2>&1 | grep "^ours\|^data\|error" | tee -a "$log"
    say "== als bench Netflix shape, k = 64, 128, device sets $sets"
    run_for 70 40 $R als bench --shape netflix --factors-list 64,128 --iterations 3 --backends cuda --device-sets "$sets" --eval-users 2000 \
        --cpu-max-interactions 0 --seed 21 --work-dir /tmp/multi-netflix --json "$out/als_netflix.json" --markdown /tmp/multi-tables-netflix.md \
        2>&1 | grep "^ours\|^data\|error" | tee -a "$log"
fi
fi

# BEM beyond one GPU (bem_multi_check: each GPU assembles its column tiles, cuSOLVERMg LU; built without
# Gmsh, so it runs from the bundle): a hard-P1 problem of n = 32,492 (geodesic sphere geo:57, 16.9 GB) on
# one GPU (cuSOLVER) and on every GPU, then a soft-P0 system of 1.2 x one GPU's memory (geo:m with
# 20 m^2 = sqrt(1.2 x memory / 16) triangles) on every GPU. ALS: a set sized 1.3 x a device capped at
# MULTI_ALS_CAP_MB (default 4096; a set larger than a whole 80 GB GPU needs ~5e9 ratings, beyond the
# generator and host memory of one call): one GPU refused, every GPU with --partitions fit.
if ((beyond)); then
    mem_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
    say "== bem hard-P1 n = 32,492 (geo:57, k = 20): one GPU, then $gpus GPUs"
    run_for 120 50 $R bem_multi_check --mesh geo:57 -k 20 --formulations hard-p1 --devices all --tile 256 --one auto 2>&1 \
        | grep "n = \|summary\|error\|^bem_multi_check" | cut -c1-400 | tee -a "$log"
    if [[ -n $mem_mib ]] && ((gpus >= 2)); then
        m_large=$(python3 -c "import math; print(int(math.sqrt(math.sqrt(1.2 * $mem_mib * 2**20 / 16) / 20)) + 1)")
        say "== bem soft-P0 larger than one GPU: geo:$m_large ($((20 * m_large * m_large)) triangles, k = 20), $gpus GPUs"
        run_for 200 100 $R bem_multi_check --mesh geo:$m_large -k 20 --formulations soft-p0 --devices all --tile 256 --one auto 2>&1 \
            | grep "n = \|summary\|error\|^bem_multi_check" | cut -c1-400 | tee -a "$log"
    fi
    cap=${MULTI_ALS_CAP_MB:-4096}
    say "== als: a set of 1.3 x a ${cap} MiB device (k = 64, slices of 256 MiB): one GPU refused, then $gpus GPUs"
    run_for 60 30 $R als generate -o /tmp/multi-oom.h5 --force --fill-memory 1.3 --device-memory-mb "$cap" --factors 64 --slice-mb 256 \
        --shape ml20m --seed 9 2>&1 | tail -2 | tee -a "$log"
    run_for 25 10 $R als train --train /tmp/multi-oom.h5 -o /tmp/multi-oom-one.h5 --force --backend cuda --devices 0 --device-memory-mb "$cap" \
        --slice-mb 256 --factors 64 --iterations 1 --seed 5 --no-loss 2>&1 | grep "error" | tee -a "$log"
    run_for 75 30 $R als train --train /tmp/multi-oom.h5 -o /tmp/multi-oom-all.h5 --force --backend cuda --devices all --partitions fit \
        --device-memory-mb "$cap" --slice-mb 256 --factors 64 --iterations 3 --seed 5 --no-loss 2>&1 | grep "^iter\|^device memory\|^backend\|error" | tee -a "$log"
fi

# MPI: mpirun -np 2 als train on the GPUs (one rank per GPU; both on GPU 0 when there is one) against
# one process, then the CPU MPI test (posv over ranks, a failing and a hanging rank).
if ((scaling)) && command -v mpirun > /dev/null && [[ -e /tmp/multi-ml20m/bench_train.h5 ]] && (( $(limit 30 30) > 0 )); then
    T=/tmp/multi-ml20m/bench_train.h5
    dev=(); ((gpus < 2)) && dev=(--devices 0)
    say "== mpirun -np 2 als train --backend cuda ${dev[*]} vs one process (ML-20M shape, k = 64, 3 iterations)"
    run_for 25 10 $R als train --train $T -o /tmp/multi-one.h5 --seed 5 --iterations 3 --backend cuda --no-loss --force 2>&1 | grep "^iter\|error" | tee -a "$log"
    run_for 30 10 mpirun --allow-run-as-root --oversubscribe -np 2 -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH=/tmp/bundle/lib:/usr/local/cuda/lib64 \
        /tmp/bundle/bin/als train --train $T -o /tmp/multi-np2.h5 --seed 5 --iterations 3 --backend cuda "${dev[@]}" --no-loss --force 2>&1 \
        | grep "^iter\|^backend\|error\|rror" | head -12 | tee -a "$log"
    $R compare_models /tmp/multi-np2.h5 /tmp/multi-one.h5 1e-3 2>&1 | tee -a "$log"
    say "== mpi_test.sh: posv over MPI ranks on the CPU backend (-np 1, 2, 3), a failing and a hanging rank"
    LD_LIBRARY_PATH=/tmp/bundle/lib:$LD_LIBRARY_PATH run_for 40 15 bash libsolver/tests/multi/mpi_test.sh mpirun /tmp/bundle/bin/batchsolve_mpi_posv 2>&1 | tail -8 | tee -a "$log"
else
    say "mpirun: not run (mpirun $(command -v mpirun || echo absent), $(left) s left)"
fi

# The tables in one file and the picture (at most six files come back: log, three JSON, tables, PNG).
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
{ echo "# Several devices on $gpus x ${gpu_name:-no GPU}, commit $commit, $(date -u +%Y-%m-%dT%H:%MZ) (libsolver/scripts/multi-gpu-run.sh $mode)"; echo
  for t in posv ml20m netflix; do [[ -e /tmp/multi-tables-$t.md ]] && { echo "## $t"; echo; cat /tmp/multi-tables-$t.md; echo; }; done; } > "$out/tables.md"
python3 libsolver/scripts/plot_multi.py --multi-bench "$out/multi_gesv.json,$out/multi_posv.json" --als "$out"/als_*.json \
    --title "$gpu_name x$gpus, $commit" --output "$out/scaling.png" 2>&1 | tail -2 | tee -a "$log"

say "== summary ($(( $(date +%s) - start )) s, commit $commit)"
python3 - "$out" <<'PY' 2>&1 | tee -a "$log"
import json, sys, os
sys.path.insert(0, "libsolver/scripts")
from plot_multi import rows_of
out = sys.argv[1]
for p in (os.path.join(out, "multi_gesv.json"), os.path.join(out, "multi_posv.json")):
    if os.path.exists(p):
        for r in rows_of(p):
            what = "gesv" if r["mode"] == "dense" else "posv"
            print(f"{what} {r['precision']} n {r['n']:3d} {r['mode']:6s} x{r['devices']} GPU: {r['seconds']:.5f} s, {r['gflops']:.0f} GFLOP/s, "
                  f"{r['speedup_vs_one']:.2f}x vs 1 GPU, berr {r['backward_error']:.2g}, failed {r['failed']}")
for name in ("als_ml20m", "als_netflix"):
    p = os.path.join(out, name + ".json")
    if os.path.exists(p):
        for r in json.load(open(p))["results"]:
            if r.get("tool") == "ours":
                s = r.get("speedup_vs_first_device_set")
                print(f"{name} k {r['factors']} devices {r.get('devices')}: {r['seconds_per_iteration']:.4f} s/iter"
                      + (f", {s:.2f}x vs devices 0" if s else "") + f", P@10 {r['p_at_10']:.4f}")
PY
if ((beyond)); then
    echo "-- beyond one GPU (bem_multi_check one GPU / every GPU; als one GPU refused / --partitions fit):"
    grep " summary: \|^device memory:\|do not fit\|does not fit" "$log" | cut -c1-400
fi
