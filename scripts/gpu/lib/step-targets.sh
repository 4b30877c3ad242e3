# merge_step_targets OUT: OUT/targets.json from every OUT/targets-<step>.json the tester wrote (the
# posv_mixed scripts mixed-phase.sh and mixed-confirm.sh), each target tagged with its step; a target
# whose row is another step's n ("no row") is left out. Prints "targets.json: M of N met".
merge_step_targets() {
  python3 - "$1" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
merged = []
for f in sorted(glob.glob(os.path.join(out, "targets-*.json"))):
    step = os.path.basename(f)[len("targets-"):-len(".json")]
    try:
        data = json.load(open(f))
    except Exception as e:
        print("unreadable", f, e)
        continue
    for t in (data if isinstance(data, list) else data.get("targets", [])):
        if t.get("row_status") == "no row":
            continue  # a target of another step's n
        t = dict(t)
        t["step"] = step
        merged.append(t)
json.dump(merged, open(os.path.join(out, "targets.json"), "w"), indent=1)
print("targets.json: %d of %d met" % (sum(1 for t in merged if t.get("met")), len(merged)))
PY
}
