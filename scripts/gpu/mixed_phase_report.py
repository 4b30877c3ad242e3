#!/usr/bin/env python3
"""The tables of scripts/gpu/mixed-phase.sh's folder: posv_mixed's designs under both tables beside
cuSOLVER's FP64 Xpotrf + Xpotrs (factor and refinement time, passes, time per pass), then the phase
split of each nsys profile: the factor's and the refinement's wall time, the kernels' busy time within
them, and the busy time per kind of kernel (SPOTRF leaves, TRSM, GEMM, conversions, SYMV, TRSV, GEMV,
TRMV, the rest), from the kernel trace.
    python3 scripts/gpu/mixed_phase_report.py FOLDER [--plot PNG]  (the script's $OUT/mixed-phase; the
    plot needs matplotlib, so it is drawn where the results are read, not on the GPU host)
    python3 scripts/gpu/mixed_phase_report.py FOLDER --targets TARGETS.json OUT.json  (targets.json from
    the folder's tester JSON, the automatic chain's rows)
"""
import csv
import glob
import json
import os
import re
import sys

KINDS = [  # (kind, pattern on the kernel name), first match wins
    ("setup (geqrf/orgqr/A)", r"geqr|orgqr|orm|larf|householder|dgemm|gaussian|Dgemm|dgmm|asum"),
    ("conversion", r"to_low_kernel|scaled_copy|diagonal_scale|identity_kernel|convert_|preset_bad|bad_to_info|merge_leaf"),
    ("SYMV", r"symv"),
    ("TRSV", r"trsv"),
    ("TRMV", r"trmv"),
    ("GEMV", r"gemv"),
    ("TRSM", r"trsm"),
    ("POTRF (cuSOLVER)", r"potrf|potf2|chol|syrk_lower|syherk"),
    ("GEMM", r"gemm|xmma|cutlass|sm90_|s1688|s16816|h16816|hmma|tensorop"),
    ("memcpy/memset", r"^\[CUDA"),
]


# The steps' tables by the step names' first word (check-<table>-...: a small-n check with it).
TABLES = ("trsm", "inverse", "fused", "shipped", "previous")


def table_of(step):
    words = step.split("-")
    word = words[1] if words[0] == "check" and len(words) > 1 else words[0]
    return word if word in TABLES else "?"


def kind_of(name):
    for k, pat in KINDS:
        if re.search(pat, name, re.IGNORECASE):
            return k
    return "other"


def fmt(v, p=2):
    return "-" if v is None else f"{v:.{p}f}"


def design_table(out):
    rows = {}
    for f in sorted(glob.glob(os.path.join(out, "*.json"))):
        base = os.path.basename(f)[:-5]
        if base.startswith("targets") or base == "manifest":
            continue
        table = table_of(base)
        try:
            data = json.load(open(f))["rows"]
        except Exception:
            continue
        for r in data:
            rows[(base, r["n"], r.get("variant", ""))] = (table, r)
    print("| step | n | cond / design | table | ms | Xpotrf+Xpotrs ms | ratio | factor ms | refine ms | passes | ms per pass | path | error (u max(sqrt n,4)) | status |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (base, n, variant), (table, r) in rows.items():
        ref = r.get("refs", {}).get("cusolver", {})
        d = r.get("detail", {})
        steps = d.get("steps", [])
        factor = sum(s.get("factor_ms", 0) for s in steps) if steps else None
        refine = sum(s.get("refine_ms", 0) for s in steps) if steps else None
        refined = [s for s in steps if s.get("path") != "double_direct"]
        passes = sum(s.get("iterations", 0) + 1 + s.get("inner_iterations", 0) for s in refined if s.get("outcome") != "not_positive_definite")
        per = refine / passes if refine and passes else None
        print(f"| {base} | {n} | {variant} | {table} | {fmt(r.get('time_ms'))} | {fmt(ref.get('time_ms'))} | {fmt(ref.get('speedup'))} | "
              f"{fmt(factor)} | {fmt(refine)} | {passes} | {fmt(per)} | {d.get('path', '-')} | {fmt(r.get('error'))} | "
              f"{r.get('status')} {r.get('note', '')[:60]} |")
    print()
    print("passes: outer passes (iterations + 1) plus GMRES products of the refined steps; ms per pass: their refinement time over that count.")


def read_csv(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    # nsys stats prints notes before the header: start at the first line that looks like a header.
    for i, line in enumerate(lines):
        if "Name" in line and ("Duration" in line or "Total Time" in line):
            return list(csv.DictReader(lines[i:]))
    return []


def col(row, *needles):
    for k in row:
        if k and all(n in k for n in needles):
            return k
    return None


def trace_split(path):
    rows = read_csv(path)
    if not rows:
        return None
    ks, kd, kn = col(rows[0], "Start"), col(rows[0], "Duration"), col(rows[0], "Name")
    ev = sorted((int(float(r[ks])), int(float(r[kd])), r[kn]) for r in rows if r.get(ks) and r.get(kd))
    # posv_mixed's runs begin with the factor's diagonal_scale_kernel; the factor ends at the first SYMV
    # (the first residual) after it; a run ends where the next begins (or at the trace's end).
    begins = [i for i, e in enumerate(ev) if "diagonal_scale_kernel" in e[2]]
    if not begins:
        return None
    first = begins[-1]  # the last run (the timed one after the warm-up)
    end = len(ev)
    symv = next((i for i in range(first, end) if "symv" in ev[i][2].lower()), end)
    out = {}
    for label, lo, hi in (("factor", first, symv), ("refinement", symv, end)):
        if hi <= lo:
            continue
        seg = ev[lo:hi]
        wall = (seg[-1][0] + seg[-1][1] - seg[0][0]) * 1e-6
        busy = sum(e[1] for e in seg) * 1e-6
        kinds = {}
        for e in seg:
            k = kind_of(e[2])
            c, t = kinds.get(k, (0, 0.0))
            kinds[k] = (c + 1, t + e[1] * 1e-6)
        out[label] = {"wall_ms": wall, "busy_ms": busy, "launches": len(seg), "kinds": kinds}
    return out


def profiles(out):
    for trace in sorted(glob.glob(os.path.join(out, "nsys", "*_cuda_gpu_trace.csv"))):
        name = os.path.basename(trace)[: -len("_cuda_gpu_trace.csv")]
        split = trace_split(trace)
        print(f"### {name}")
        print()
        if split:
            print("| phase | wall ms | kernel busy ms | launches | kind: launches, busy ms |")
            print("|---|---|---|---|---|")
            for label, s in split.items():
                kinds = "; ".join(f"{k}: {c}, {t:.2f}" for k, (c, t) in sorted(s["kinds"].items(), key=lambda x: -x[1][1]))
                print(f"| {label} | {s['wall_ms']:.2f} | {s['busy_ms']:.2f} | {s['launches']} | {kinds} |")
            print()
        summ = os.path.join(out, "nsys", name + "_cuda_gpu_kern_sum.csv")
        if os.path.exists(summ):
            rows = read_csv(summ)
            if rows:
                kt, ki, kn = col(rows[0], "Total Time"), col(rows[0], "Instances"), col(rows[0], "Name")
                print("| kernel (whole process, warm-up and set-up included) | kind | launches | total ms |")
                print("|---|---|---|---|")
                for r in sorted(rows, key=lambda r: -float(r[kt]))[:25]:
                    print(f"| {r[kn][:110]} | {kind_of(r[kn])} | {r[ki]} | {float(r[kt]) * 1e-6:.2f} |")
                print()
    for f in sorted(glob.glob(os.path.join(out, "nsys", "*.ncu.csv"))):
        print(f"### {os.path.basename(f)} (ncu: gpu__time_duration per kind)")
        kinds = {}
        try:
            for r in read_csv_ncu(f):
                k = kind_of(r["Kernel Name"])
                c, t = kinds.get(k, (0, 0.0))
                kinds[k] = (c + 1, t + float(r["Metric Value"]) * 1e-6)
        except Exception as e:
            print("unreadable:", e)
        for k, (c, t) in sorted(kinds.items(), key=lambda x: -x[1][1]):
            print(f"- {k}: {c} launches, {t:.2f} ms")
        print()


def read_csv_ncu(path):
    with open(path, newline="") as f:
        lines = [l for l in f.read().splitlines() if l.startswith('"')]
    return list(csv.DictReader(lines))


def plot(out, png):
    """Time per design and table for each n and condition number, cuSOLVER's Xpotrf + Xpotrs as a line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = {}  # n -> {(table, design): {cond: ms}}
    peer = {}    # (n, cond) -> ms
    for f in sorted(glob.glob(os.path.join(out, "*-*.json"))):
        base = os.path.basename(f)[:-5]
        if base.startswith("check-") or not base.startswith(TABLES):
            continue
        table = table_of(base)
        for r in json.load(open(f))["rows"]:
            if not r.get("time_ms"):
                continue
            cond, _, design = r["variant"].partition("/")
            series.setdefault(r["n"], {}).setdefault((table, design or "auto"), {})[cond] = r["time_ms"]
            ref = r.get("refs", {}).get("cusolver", {})
            if ref.get("time_ms"):
                peer[(r["n"], cond)] = ref["time_ms"]
    ns = sorted(series)
    if not ns:
        return
    fig, axes = plt.subplots(1, len(ns), figsize=(7 * len(ns), 5), squeeze=False)
    for ax, n in zip(axes[0], ns):
        conds = sorted({c for v in series[n].values() for c in v}, key=lambda c: float(c[4:]))
        keys = sorted(series[n])
        width = 0.8 / max(1, len(keys))
        for k, key in enumerate(keys):
            ys = [series[n][key].get(c, 0) for c in conds]
            ax.bar([i + k * width for i in range(len(conds))], ys, width, label=f"{key[0]}: {key[1]}",
                   hatch={"inverse": "//", "fused": "xx"}.get(key[0]))
        for i, c in enumerate(conds):
            if (n, c) in peer:
                ax.hlines(peer[(n, c)], i - 0.1, i + 0.9, colors="k", linestyles="--")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(conds))], conds)
        ax.set_ylabel("ms (dashed: cuSOLVER FP64 Xpotrf + Xpotrs)")
        ax.set_title(f"posv_mixed d, n = {n}")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def targets_from_rows(out, targets_file, dest):
    """targets.json from the folder's tester JSON: each target of targets_file (routine posv_mixed, n,
    variant cond1eX, metric speedup:<peer> or error) against the automatic chain's row of each step
    (variant cond1eX, or cond1eX/auto where a tester named it so), measured None where the step did
    not run that peer; the step's table beside it."""
    wanted = json.load(open(targets_file))
    result = []
    for f in sorted(glob.glob(os.path.join(out, "*-*.json"))):
        base = os.path.basename(f)[:-5]
        if base.startswith(("check-", "targets")) or not base.startswith(TABLES):
            continue
        rows = json.load(open(f))["rows"]
        for t in wanted:
            match = [r for r in rows if r["n"] == t["n"] and r.get("variant") in (t["variant"], t["variant"] + "/auto")]
            if not match:
                continue
            r = match[0]
            if t["metric"] == "error":
                measured = r.get("error")
            else:
                peer = r.get("refs", {}).get(t["metric"].split(":", 1)[1], {})
                measured = peer.get("speedup") if peer.get("ran", True) else None
            met = measured is not None and (measured >= t["value"] if t["op"] == ">=" else measured <= t["value"])
            result.append({"step": base, "table": table_of(base), "target": t, "measured": measured, "met": bool(met),
                           "basis": f"{base}.json row {r.get('variant')} (status {r.get('status')})"})
    json.dump(result, open(dest, "w"), indent=1)
    return result


def main():
    out = sys.argv[1]
    if len(sys.argv) > 4 and sys.argv[2] == "--targets":
        rows = targets_from_rows(out, sys.argv[3], sys.argv[4])
        print("targets: %d of %d met (%d measured)" % (sum(r["met"] for r in rows), len(rows),
                                                         sum(r["measured"] is not None for r in rows)))
        return
    design_table(out)
    print()
    profiles(out)
    if len(sys.argv) > 3 and sys.argv[2] == "--plot":
        plot(out, sys.argv[3])


if __name__ == "__main__":
    main()
