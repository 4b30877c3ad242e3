#!/usr/bin/env python3
"""scripts/gpu/bem.sh's summary.csv -> results.json and table.md (one row per bem solve run).

    resident_table.py SUMMARY_CSV OUT_DIR [--baseline "soft-p1 32870 21.6 17.4" ...]

The baseline rows are figures measured before (BASELINES.md), printed beside the new ones.
"""
import argparse
import csv
import json
import os


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("summary")
    ap.add_argument("out_dir")
    args = ap.parse_args()
    with open(args.summary, newline="") as f:
        rows = list(csv.DictReader(f))
    runs = []
    for r in rows:
        run = {"case": r["case"], "formulation": r["formulation"], "mesh": r["mesh"], "wavenumber": number(r["k"]),
               "order": int(r["n"]) if r["n"] else None, "exit_code": int(r["rc"]) if r["rc"].lstrip("-").isdigit() else r["rc"]}
        for key in ("wall_s", "assembly_s", "assembly_kernels_s", "element_pairs_per_s", "solve_s", "residual_s", "outputs_s",
                    "peak_host_gib", "peak_device_gib", "scaled_residual", "rcond", "mie_far_error", "mie_surface_error"):
            run[key] = number(r.get(key))
        run["path"] = r.get("path", "")
        runs.append(run)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "results.json"), "w") as f:
        json.dump({"runs": runs}, f, indent=1)

    def fmt(v, spec):
        return "" if v is None else format(v, spec)

    lines = ["| case | formulation | mesh | k | n | exit | wall s | assembly s (kernels) | element pairs/s | solve s | residual s | outputs s | "
             "peak host GiB | peak device GiB | scaled residual | far field vs Mie | surface vs Mie |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append("| " + " | ".join([r["case"], r["formulation"], r["mesh"], fmt(r["wavenumber"], "g"),
                                        "" if r["order"] is None else f"{r['order']:,}", str(r["exit_code"]), fmt(r["wall_s"], ".2f"),
                                        fmt(r["assembly_s"], ".3f") + ("" if r["assembly_kernels_s"] is None else f" ({r['assembly_kernels_s']:.3f})"),
                                        fmt(r["element_pairs_per_s"], ".3g"), fmt(r["solve_s"], ".3f"), fmt(r["residual_s"], ".3f"),
                                        fmt(r["outputs_s"], ".3f"), fmt(r["peak_host_gib"], ".2f"), fmt(r["peak_device_gib"], ".2f"),
                                        fmt(r["scaled_residual"], ".2e"), fmt(r["mie_far_error"], ".3e"), fmt(r["mie_surface_error"], ".3e")]) + " |")
    with open(os.path.join(args.out_dir, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
