#!/usr/bin/env bash
# An hour of CPU per reader: every libFuzzer target of a fuzz build run in stretches until it has
# used CPU_SECONDS of CPU, then its failing inputs triaged once (scripts/sanitize-fuzz.sh).
#
#   scripts/fuzz-campaign.sh [--cpu-seconds S] [--stretch W] [--jobs J] [--only a,b] BUILD_DIR CAMPAIGN_DIR
#   scripts/fuzz-campaign.sh --report CAMPAIGN_DIR        (the table of a campaign so far)
#
# BUILD_DIR is a build of the `fuzz` preset (clang, ASan + UBSan, scripts/sanitize-cpu.sh makes one);
# the targets and their seed corpora are the ones its CTests name. CPU is what counts, not wall time:
# the campaign runs at nice 19 (it takes only the idle CPU of a machine that is also building), each
# stretch under /usr/bin/time, whose user + system seconds (fork-mode children included) go into the
# target's ledger. CAMPAIGN_DIR/<target>/ keeps the grown corpus, the failing inputs and
# ledger.jsonl across runs: a second run with the same CAMPAIGN_DIR goes on where the first stopped.
# Defaults: S = 3600, W = 600 s of wall time per stretch, J = 2 targets at a time.
# The report (CAMPAIGN_DIR/campaign.json and campaign.md) gives per target: CPU seconds, wall seconds,
# executions, corpus inputs found, and the failing inputs by owner (ours / inside a system library).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cpu_seconds=3600 stretch=600 jobs=2 only="" report_only=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --cpu-seconds) cpu_seconds=$2; shift 2 ;;
    --stretch) stretch=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --report) report_only=1; shift ;;
    -h|--help) sed -n 2,16p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz-campaign: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
for v in cpu_seconds stretch jobs; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "fuzz-campaign: --${v//_/-} must be a positive integer, not '${!v}'" >&2; exit 2; }
done

report() {  # campaign.json + campaign.md from every target's ledger and triage
  python3 - "$1" <<'PY'
import json, pathlib, sys, datetime
root = pathlib.Path(sys.argv[1]); rows = []
for t in sorted(p for p in root.iterdir() if (p / "ledger.jsonl").is_file()):
    runs = [json.loads(l) for l in (t / "ledger.jsonl").read_text().splitlines() if l.strip()]
    tri = (t / "triage.txt").read_text().strip().splitlines()[-1] if (t / "triage.txt").is_file() else ""
    rows.append({"target": t.name, "stretches": len(runs),
                 "cpu_s": round(sum(r["cpu_s"] for r in runs)), "wall_s": round(sum(r["wall_s"] for r in runs)),
                 "execs": sum(r["execs"] for r in runs),
                 "corpus_inputs": sum(1 for _ in (t / "corpus").glob("*")) if (t / "corpus").is_dir() else 0,
                 "failing_inputs": sum(1 for _ in (t / "artifacts").glob("*")) if (t / "artifacts").is_dir() else 0,
                 "triage": tri})
out = {"generated": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z", "targets": rows}
(root / "campaign.json").write_text(json.dumps(out, indent=1) + "\n")
lines = ["| target | CPU s | wall s | stretches | execs | corpus inputs | failing inputs | triage |",
         "|---|---:|---:|---:|---:|---:|---:|---|"]
for r in rows:
    lines.append(f"| `{r['target']}` | {r['cpu_s']} | {r['wall_s']} | {r['stretches']} | {r['execs']:,} | "
                 f"{r['corpus_inputs']} | {r['failing_inputs']} | {r['triage'] or 'not yet'} |")
(root / "campaign.md").write_text("\n".join(lines) + "\n"); print("\n".join(lines))
PY
}

if ((report_only)); then
  [[ -d ${1:-} ]] || { echo "fuzz-campaign: --report needs CAMPAIGN_DIR (a folder)" >&2; exit 2; }
  report "$1"; exit 0
fi
(($# == 2)) || { echo "usage: $0 [options] BUILD_DIR CAMPAIGN_DIR (see --help)" >&2; exit 2; }
build=$1 campaign=$2
[[ -f $build/CTestTestfile.cmake ]] || { echo "fuzz-campaign: $build is not a build folder (no CTestTestfile.cmake)" >&2; exit 2; }
mkdir -p "$campaign" || exit 2

# target name, executable and seed corpus of every fuzz CTest (its command: bash sanitize-fuzz.sh FUZZER SEEDS WORK SECONDS)
mapfile -t specs < <(ctest --test-dir "$build" -L fuzz --show-only=json-v1 2>/dev/null | python3 -c '
import json, sys, os
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command", [])
    for i, a in enumerate(cmd):
        if a.endswith("sanitize-fuzz.sh") and len(cmd) >= i + 3:
            print(os.path.basename(cmd[i + 1]), cmd[i + 1], cmd[i + 2])')
((${#specs[@]})) || { echo "fuzz-campaign: $build registers no fuzz CTests (configure with the fuzz preset)" >&2; exit 2; }

cpu_used() { python3 -c 'import json,sys; print(round(sum(json.loads(l)["cpu_s"] for l in open(sys.argv[1]) if l.strip())))' "$1" 2>/dev/null || echo 0; }

one_target() {
  local name=$1 fuzzer=$2 seeds=$3 work=$campaign/$1
  mkdir -p "$work"; touch "$work/ledger.jsonl"
  while (( $(cpu_used "$work/ledger.jsonl") < cpu_seconds )); do
    local t0; t0=$(date -u +%FT%TZ)
    SANITIZE_FUZZ_TRIAGE=0 /usr/bin/time -f '%U %S %e' -o "$work/time.txt" \
      nice -n 19 bash "$here/sanitize-fuzz.sh" "$fuzzer" "$seeds" "$work" "$stretch" > "$work/stretch.txt" 2>&1
    local rc=$?
    read -r user sys wall < <(tail -1 "$work/time.txt")
    local execs; execs=$(grep -oE '[0-9]+ execs' "$work/stretch.txt" | tail -1 | cut -d' ' -f1)
    printf '{"start": "%s", "wall_s": %s, "cpu_s": %s, "execs": %s, "rc": %s}\n' \
      "$t0" "$wall" "$(python3 -c "print(round($user + $sys, 1))")" "${execs:-0}" "$rc" >> "$work/ledger.jsonl"
    echo "fuzz-campaign: $name: $(cpu_used "$work/ledger.jsonl") of $cpu_seconds CPU s"
    if ((rc != 0)); then cat "$work/stretch.txt"; echo "fuzz-campaign: $name: stopped (libFuzzer failed)"; return 1; fi
  done
  # One triage of everything this target's campaign found (SECONDS = 0: replay only).
  nice -n 19 bash "$here/sanitize-fuzz.sh" "$fuzzer" "$seeds" "$work" 0 > "$work/triage.txt" 2>&1
  tail -1 "$work/triage.txt"
}

status=0 running=0
for spec in "${specs[@]}"; do
  read -r name fuzzer seeds <<<"$spec"
  [[ -n $only && ",$only," != *",$name,"* ]] && continue
  one_target "$name" "$fuzzer" "$seeds" &
  running=$((running + 1))
  if ((running >= jobs)); then wait -n || status=1; running=$((running - 1)); fi
done
while ((running > 0)); do wait -n || status=1; running=$((running - 1)); done
report "$campaign"
exit $status
