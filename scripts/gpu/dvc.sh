#!/usr/bin/env bash
# dvc end to end on one GPU (repository root, bundle at /tmp/bundle, $OUT set; ~150 s on an H200):
#   1. the GPU tests of the volume stages and of the engines (GPU against CPU),
#   2. per size (192^3, 512^3): dvc generate writes a float32 pair as raw files (translation
#      0.37,-0.21,0.55 voxels, strain 0.002,-0.001,0.003, degree-5 resampling), then
#      `dvc correlate --reference ref.raw --deformed def.raw --dims N^3 --dtype float32 --backend cuda`
#      with default settings, three times (the first fills the kernel cache; it is reported too):
#      process wall time, dvc's stage times (--summary-json), dvc's device memory and the GPU's
#      peak memory in use (nvidia-smi, sampled every 50 ms), RMSE against the truth, points/s;
#   3. a 1024^3 uint16 pair (white noise against itself): runs on one GPU or is refused before work.
# Results under $OUT/dvc/: tests.txt, runs.csv, runs.json, table.md, summary-<size>-<run>.json.
# Knobs: DVC_SIZES ("192 512"), DVC_REPEATS (3), DVC_BACKEND (cuda), DVC_BIG (1: also a 1024^3 uint16 pair), DVC_BUNDLE_RUN (replaces /tmp/bundle/run).
set -uo pipefail
out=${OUT:?OUT must name the results folder}/dvc
mkdir -p "$out"
R=${DVC_BUNDLE_RUN:-/tmp/bundle/run}
work=$(mktemp -d /tmp/dvc_e2e_XXXXXX)
trap 'rm -rf "$work"' EXIT
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-$work/kernel-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "dvc end to end: commit $commit, GPU ${gpu:-none}, $(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) CPU threads"

echo "== GPU tests"
timeout 60 "$R" test_dvc_stages --gtest_brief=1 > "$out/tests.txt" 2>&1
echo "test_dvc_stages rc=$?" >> "$out/tests.txt"
timeout 60 "$R" test_dic_volume --gtest_brief=1 --gtest_filter='Gpu.*' >> "$out/tests.txt" 2>&1
echo "test_dic_volume Gpu.* rc=$?" >> "$out/tests.txt"
grep -E "PASSED|FAILED|SKIPPED|rc=" "$out/tests.txt"

elapsed() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }

peak_sampler() {  # prints the largest memory.used (MiB) seen until killed
  local peak=0 m
  while true; do
    m=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
    [[ $m =~ ^[0-9]+$ ]] && (( m > peak )) && peak=$m && echo "$peak" > "$1"
    sleep 0.05
  done
}

echo "size,run,wall_s,rc,gpu_peak_mib" > "$out/runs.csv"
for n in ${DVC_SIZES:-192 512}; do
  echo "== ${n}^3: generate"
  t0=$(date +%s.%N)
  timeout 100 "$R" dvc generate -o "$work/pair$n.h5" --raw "$work/v$n" --size "$n" --translation 0.37,-0.21,0.55 \
      --strain 0.002,-0.001,0.003 --seed 5 --force 2>&1 | tail -1
  echo "generated in $(elapsed "$t0") s"
  idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
  for run in $(seq 1 "${DVC_REPEATS:-3}"); do
    echo "0" > "$work/peak"
    peak_sampler "$work/peak" & sampler=$!
    t0=$(date +%s.%N)
    timeout 60 "$R" dvc correlate --reference "$work/v${n}_reference.raw" --deformed "$work/v${n}_deformed.raw" \
        --dims "${n}x${n}x${n}" --dtype float32 --backend "${DVC_BACKEND:-cuda}" -o "$work/result$n.h5" --force -q \
        --truth "$work/pair$n.h5" --summary-json "$out/summary-$n-$run.json" > "$out/correlate-$n-$run.txt" 2>&1
    rc=$?
    wall=$(elapsed "$t0")
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    peak=$(cat "$work/peak")
    echo "$n,$run,$wall,$rc,$peak" >> "$out/runs.csv"
    echo "run $run: rc $rc, wall $wall s, GPU peak $peak MiB (idle ${idle:-?} MiB)"
    tail -3 "$out/correlate-$n-$run.txt"
  done
done

if [[ ${DVC_BIG:-1} == 1 ]]; then
  # 1024^3 uint16: does a pair of this size run on one GPU (or is it refused before work)? White
  # noise against itself (zero displacement): the memory and time of every stage at that size.
  echo "== 1024^3 uint16 (noise against itself)"
  head -c $((2 * 1024 * 1024 * 1024)) /dev/urandom > "$work/big_u16.raw"
  echo "0" > "$work/peak"
  peak_sampler "$work/peak" & sampler=$!
  t0=$(date +%s.%N)
  timeout 90 "$R" dvc correlate --reference "$work/big_u16.raw" --deformed "$work/big_u16.raw" --dims 1024x1024x1024 \
      --dtype uint16 --backend cuda -o "$work/big.h5" --force -q --summary-json "$out/summary-1024-1.json" > "$out/correlate-1024-1.txt" 2>&1
  rc=$?
  wall=$(elapsed "$t0")
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  echo "1024,1,$wall,$rc,$(cat "$work/peak")" >> "$out/runs.csv"
  echo "1024^3 uint16: rc $rc, wall $wall s, GPU peak $(cat "$work/peak") MiB"
  tail -3 "$out/correlate-1024-1.txt"
  rm -f "$work/big_u16.raw" "$work/big.h5"
fi

python3 - "$out" "$commit" "$gpu" <<'PY'
import csv, json, sys, os
out, commit, gpu = sys.argv[1:4]
rows = []
for r in csv.DictReader(open(f"{out}/runs.csv")):
    f = f"{out}/summary-{r['size']}-{r['run']}.json"
    s = json.load(open(f)) if os.path.exists(f) else {}
    t, e = s.get("timings_s", {}), s.get("end_to_end_s", {})
    pts = s.get("points", 0)
    rows.append(dict(size=int(r["size"]), run=int(r["run"]), rc=int(r["rc"]), wall_s=float(r["wall_s"]), points=pts,
                     converged=s.get("status", {}).get("converged", 0), rmse=s.get("rmse"), read_s=e.get("read"),
                     correlate_s=t.get("total"), prepare_s=t.get("prepare"), fft_guess_s=t.get("fft_guess"), icgn_s=t.get("icgn"),
                     factor_s=t.get("factor"), solve_s=t.get("solve"), strain_s=e.get("strain"), write_s=e.get("write"),
                     end_to_end_s=e.get("total"), dvc_device_mib=s.get("device_bytes", 0) / 2**20, gpu_peak_mib=int(r["gpu_peak_mib"] or 0)))
json.dump({"commit": commit, "gpu": gpu, "runs": rows}, open(f"{out}/runs.json", "w"), indent=1)
fmt = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"
lines = ["| size | run | rc | wall s | dvc e2e s | read s | correlate s | prepare s | FFT guess s | IC-GN s | strain s | write s | points | converged | RMSE vox | points/s (wall) | dvc MiB | GPU peak MiB |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append(f"| {r['size']}^3 | {r['run']} | {r['rc']} | {r['wall_s']:.3f} | {fmt(r['end_to_end_s'])} | {fmt(r['read_s'])} | {fmt(r['correlate_s'])} | "
                 f"{fmt(r['prepare_s'])} | {fmt(r['fft_guess_s'])} | {fmt(r['icgn_s'])} | {fmt(r['strain_s'])} | {fmt(r['write_s'])} | {r['points']} | "
                 f"{r['converged']} | {'-' if r['rmse'] is None else format(r['rmse'], '.3e')} | {r['points'] / r['wall_s']:.0f} | {r['dvc_device_mib']:.0f} | {r['gpu_peak_mib']} |")
text = f"# dvc correlate end to end, --backend cuda, defaults (GPU {gpu}, commit {commit}; run 1 fills the kernel cache)\n\n" + "\n".join(lines) + "\n"
open(f"{out}/table.md", "w").write(text)
print(text)
PY
