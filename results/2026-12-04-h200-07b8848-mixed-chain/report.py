#!/usr/bin/env python3
"""Tables and plot of a posv_mixed topic folder (mixed-lookahead.sh / mixed-chain.sh output): per n and
condition number, each table's designs against FP64 Xpotrf + Xpotrs of the same process, the phases.

    python3 report.py FOLDER   (writes FOLDER/tables.md and FOLDER/posv_mixed.png)
"""
import collections, glob, json, os, sys

CONDS = ["cond1e2", "cond1e4", "cond1e6", "cond1e8"]
ORDER = ["shipped", "lookahead", "rows", "both", "both-w1024", "both-leaf", "leaf", "all"]


def rows_of(folder):
    out = []
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        step = os.path.basename(f)[:-5]
        if step.startswith("targets") or step == "manifest":
            continue
        table = step.rsplit("-", 1)[0] if step.rsplit("-", 1)[-1].isdigit() else step
        for r in json.load(open(f)).get("rows", []):
            cond, _, design = r["variant"].partition("/")
            det = r.get("detail") or {}
            steps = [s for s in det.get("steps") or [] if isinstance(s, dict)]
            refined = [s for s in steps if s.get("path") != "double_direct"]
            passes = sum(s.get("iterations", 0) + 1 for s in refined if s.get("refine_ms", 0) > 0)
            cu = r["refs"].get("cusolver", {}).get("time_ms")
            irs = r["refs"].get("cusolver-irs-best", {})
            out.append(dict(step=step, table=table, n=r["n"], cond=cond, design=design or "auto", ms=r["time_ms"],
                            cu=cu, ratio=cu / r["time_ms"] if cu else None,
                            fac=sum(s.get("factor_ms", 0) for s in steps), ref=sum(s.get("refine_ms", 0) for s in steps),
                            passes=passes, per=(sum(s.get("refine_ms", 0) for s in refined) / passes) if passes else None,
                            path="->".join(s.get("path", "?") for s in steps) or det.get("path", "-"),
                            err=r.get("error"), status=r["status"], roof=r.get("roofline"),
                            irs=irs.get("time_ms"), irs_name=irs.get("note", "").replace("fastest: ", "")))
    return out


def f(v, d=2):
    return "-" if v is None else ("%." + str(d) + "f") % v


def main(folder):
    rows = rows_of(folder)
    key = lambda r: (ORDER.index(r["table"]) if r["table"] in ORDER else 99, r["table"], r["design"])
    lines = []
    base_design = "auto/fused0" if any(r["design"] == "auto/fused0" for r in rows) else "auto"
    for n in sorted({r["n"] for r in rows if r["n"] >= 8192}):
        sel = [r for r in rows if r["n"] == n]
        shipped = {r["cond"]: r for r in sel if r["table"] == "shipped" and r["design"] == base_design}
        for cond in CONDS:
            cs = sorted((r for r in sel if r["cond"] == cond), key=key)
            if not cs:
                continue
            s = shipped.get(cond)
            lines.append("\n### n = %d, %s (shipped = the shipped table's %s: %s ms)\n" % (n, cond.replace("cond", "cond "), base_design, f(s["ms"]) if s else "-"))
            lines.append("| table | design | ours ms | Xpotrf+Xpotrs ms | ratio (Xpotrf / ours) | vs shipped | factor ms | refinement ms | passes | ms a pass | path | error | fraction of DGEMM roofline |")
            lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            for r in cs:
                vs = "%+.1f %%" % (100 * (r["ms"] / s["ms"] - 1)) if s else "-"
                lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    r["table"], r["design"], f(r["ms"]), f(r["cu"]), f(r["ratio"], 3), vs, f(r["fac"]), f(r["ref"]),
                    r["passes"] or "-", f(r["per"]), r["path"], "%.3g" % r["err"], f(r["roof"], 3)))
            irs = [r for r in cs if r["irs"]]
            for r in irs:
                lines.append("\n%s %s: fastest cuSOLVER IRS (%s) %s ms, %s x ours." % (r["table"], r["design"], r["irs_name"], f(r["irs"]), f(r["irs"] / r["ms"], 2)))
    small = [r for r in rows if r["n"] < 8192]
    if small:
        lines.append("\n### small n (checks and the leaf alone)\n")
        lines.append("| step | n | cond | design | ours ms | Xpotrf+Xpotrs ms | ratio | factor ms | refinement ms | passes | path | error |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(small, key=lambda r: (r["step"], r["n"], r["design"])):
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.3g |" % (r["step"], r["n"], r["cond"], r["design"], f(r["ms"], 3), f(r["cu"], 3), f(r["ratio"], 3), f(r["fac"], 3), f(r["ref"], 3), r["passes"] or "-", r["path"], r["err"]))
    open(os.path.join(folder, "tables.md"), "w").write(
        "# posv_mixed (d): every row at n >= 8192 by condition number; small n at the end\n\n"
        "ratio = FP64 cusolverDnXpotrf + Xpotrs ms / ours, both in the same tester process; vs shipped: "
        "against the shipped table's %s row (its own process, same call); error in units of "
        "u max(sqrt n, 4) (<= 2: the library's stopping test); written by report.py from the step JSON.\n" % base_design
        + "\n".join(lines) + "\n")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ns = sorted({r["n"] for r in rows if r["n"] >= 8192})
    fig, axes = plt.subplots(len(ns), 1, figsize=(12, 4.4 * len(ns)))
    colors = {"cond1e2": "#4c72b0", "cond1e4": "#55a868", "cond1e6": "#c44e52", "cond1e8": "#8172b2"}
    for ax, n in zip(axes, ns):
        sel = [r for r in rows if r["n"] == n]
        ds = sorted({(r["table"], r["design"]) for r in sel}, key=lambda k: key({"table": k[0], "design": k[1]}))
        width = 0.8 / len(CONDS)
        for j, cond in enumerate(CONDS):
            by = {(r["table"], r["design"]): r for r in sel if r["cond"] == cond}
            xs = [i + (j - 1.5) * width for i, d in enumerate(ds) if d in by]
            ax.bar(xs, [by[d]["ms"] for d in ds if d in by], width, color=colors[cond], label=cond.replace("cond", "cond "))
            cu = [r["cu"] for r in sel if r["cond"] == cond and r["cu"]]
            if cu:
                ax.axhline(sorted(cu)[len(cu) // 2], color=colors[cond], ls="--", lw=0.8)
        ax.set_xticks(range(len(ds)))
        ax.set_xticklabels(["%s %s" % d for d in ds], fontsize=7, rotation=30, ha="right")
        ax.set_ylabel("ms (median of 3)")
        ax.set_title("posv_mixed d, n = %d: time per table/design and cond (dashed: FP64 Xpotrf + Xpotrs, median of the steps)" % n, fontsize=9)
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "posv_mixed.png"), dpi=90)


if __name__ == "__main__":
    main(sys.argv[1])
