#!/usr/bin/env bash
# One device call for several GPU scripts: unpacks the bundle (.team-bundle/bundle.tar.xz, built by
# ../shared/tools/gpu-bundle from the build tree) to /tmp/bundle and, when carried, the older
# commit's executables (.old-benches/bundle.tar.xz) to /tmp/old-benches/bundle; then runs each
# scripts/gpu/<topic>.sh named as TOPIC:SECONDS in turn, each under its own time limit with
# OUT=/tmp/team/<topic>, and packs every topic's files into $OUT/<topic>.tar.gz (the device tool
# returns at most 8 files). The summary lines (topic, exit code, seconds) come last.
#   scripts/gpu/team-call.sh dvc:150 bem:150 tester-fold:200
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
tar -xJf .team-bundle/bundle.tar.xz -C /tmp || { echo "team-call: no bundle" >&2; exit 1; }
if [[ -z ${OLD_BIN_DIR:-} && -f .old-benches/bundle.tar.xz ]]; then
  mkdir -p /tmp/old-benches && tar -xJf .old-benches/bundle.tar.xz -C /tmp/old-benches
  export OLD_BIN_DIR=/tmp/old-benches/bundle/bin OLD_RUN=/tmp/old-benches/bundle/run
fi
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()
for spec in "$@"; do
  topic=${spec%%:*}; secs=${spec##*:}
  dir=/tmp/team/$topic; mkdir -p "$dir"
  t0=$SECONDS
  OUT=$dir TOPIC_BUDGET_S=$secs timeout -k 10 "$secs" bash "scripts/gpu/$topic.sh" > "$dir/console.log" 2>&1
  rc=$?
  tail -n 25 "$dir/console.log"
  tar -C /tmp/team -czf "$out/$topic.tar.gz" "$topic"
  summary+=("$(printf '%-22s rc=%-4s %5d s' "$topic" "$rc" "$((SECONDS - t0))")")
done
echo "== team call summary ($BATCHSOLVE_COMMIT) =="
printf '%s\n' "${summary[@]}"
