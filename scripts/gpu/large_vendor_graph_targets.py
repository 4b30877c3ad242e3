#!/usr/bin/env python3
"""targets-<step>.json for the steps of a large-vendor-graph.sh folder whose tester was stopped by its
time limit before it wrote its targets report (the rows it had measured are in <step>.json): the same
targets file (--targets) judged on those rows, metric speedup:<ref> = the row's refs[<ref>].speedup,
error = the row's error; a target of another n or variant is "no row". Then OUT/targets.json is merged
as the script does (lib/step-targets.sh's rule, here in Python).
    scripts/gpu/large_vendor_graph_targets.py FOLDER STEP=TARGETS.json [STEP=TARGETS.json ...]"""
import glob, json, lzma, os, sys

folder = sys.argv[1]


def load(path):
    return json.load(lzma.open(path) if path.endswith(".xz") else open(path))


for spec in sys.argv[2:]:
    step, targets_file = spec.split("=", 1)
    out_file = os.path.join(folder, "targets-%s.json" % step)
    if os.path.exists(out_file):
        continue
    raw = [f for f in (os.path.join(folder, step + ".json"), os.path.join(folder, step + ".json.xz")) if os.path.exists(f)]
    data = load(raw[0])
    rows = data.get("rows", [])
    judged = []
    for t in json.load(open(targets_file)):
        match = [r for r in rows if r["routine"] == t["routine"] and r["precision"] == t["precision"] and r["n"] == t["n"]
                 and r.get("variant", "") == t.get("variant", r.get("variant", "")) and r.get("status") == "ok"]
        entry = {"target": t, "row_status": "ok" if match else "no row", "measured": None, "met": False,
                 "basis": "judged from %s by large_vendor_graph_targets.py (the tester was stopped before its report)" % os.path.basename(raw[0])}
        if match:
            r = match[0]
            metric = t["metric"]
            v = r.get("error") if metric == "error" else r.get("refs", {}).get(metric.split(":", 1)[1], {}).get("speedup")
            entry.update(measured=v, n=r["n"], precision=r["precision"], routine=r["routine"], variant=r.get("variant", ""))
            if v is None:
                entry["row_status"] = "not measured"
            else:
                entry["met"] = bool(v >= t["value"] if t["op"] == ">=" else v <= t["value"])
        judged.append(entry)
    json.dump({"git_commit": data.get("header", {}).get("git_commit", ""), "targets": judged}, open(out_file, "w"), indent=1)
    print("wrote", out_file)

merged = []
for f in sorted(glob.glob(os.path.join(folder, "targets-*.json"))):
    step = os.path.basename(f)[len("targets-"):-len(".json")]
    data = json.load(open(f))
    for t in (data if isinstance(data, list) else data.get("targets", [])):
        if t.get("row_status") in ("no row", "not measured") or t.get("measured") is None:
            continue  # another step's n, or a peer this step did not run
        t = dict(t)
        t["step"] = step
        merged.append(t)
json.dump(merged, open(os.path.join(folder, "targets.json"), "w"), indent=1)
print("targets.json: %d of %d met" % (sum(1 for t in merged if t.get("met")), len(merged)))
