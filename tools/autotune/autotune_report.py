#!/usr/bin/env python3
"""Report of an autotuner run: a Markdown table of the winners and plots like Figs. 15-19 of the seed
paper (Dongarra et al., Proc. IEEE 2018), from the tuning table and the candidates log of `autotune`.

    tools/autotune/autotune_report.py --table libsolver/tuning/sm90.json --log candidates*.jsonl.xz --out report/

Logs may be plain, .xz or .gz, and several (a sweep split over resumed runs writes one each).

Writes report/autotune.md and PNGs next to it:
  best_vs_n_<routine>_<prec>.png        best GFLOP/s vs n, one line per layout family (the table)
  nb_<routine>_<prec>_<layout>.png      for selected n, the best GFLOP/s for each tile size nb (Fig. 15)
  looking_<routine>_<prec>.png          best GFLOP/s per looking order: vs n, and for selected n (Fig. 16)
  chunking_<routine>_<prec>.png         interleaved vs chunked interleaved, best vs n (Fig. 17)
  chunk_size_<routine>_<prec>.png       for selected n, best GFLOP/s vs chunk size (Fig. 18)
  unroll_<routine>_<prec>.png           partial vs full unrolling, best vs n (Fig. 19)
"Best" is the fastest candidate that was timed with that parameter value: the search is staged, so
a value is only timed with the other parameters of its stage (see libsolver/tuning/README.md).
"""

import argparse
import collections
import gzip
import json
import lzma
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

LAYOUTS = ["interleaved", "chunked", "column_major"]
LOOKINGS = ["left", "right", "top"]


def open_text(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt")
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def read_log(path):
    """Timed candidates of the log (lines with a time); the run headers and untimed lines are skipped."""
    rows = []
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                j = json.loads(line)
            except json.JSONDecodeError as e:  # e.g. the last line of a killed run
                print(f"autotune_report: {path}:{number}: skipped ({e})", file=sys.stderr)
                continue
            if "config" not in j or j.get("ms") is None or not j.get("gflops"):
                continue
            rows.append(j)
    return rows


def read_table(path):
    try:
        with open(path) as f:
            table = json.load(f)
    except json.JSONDecodeError as e:
        raise SystemExit(f"autotune_report: --table {path}: not JSON ({e})")
    if not isinstance(table, dict):
        raise SystemExit(f"autotune_report: --table {path}: not a JSON object (not a tuning table)")
    for field in ("device", "entries"):
        if field not in table:
            raise SystemExit(f"autotune_report: {path}: no '{field}' (not a tuning table)")
    return table


def short_config(c, layout, routine):
    """The fields that matter for this layout, in a few words."""
    parts = []
    if layout == "column_major":
        if routine != "potrs":
            parts.append(f"{c.get('rows_per_thread')}x{c.get('threads_per_row')} thr/row")
            parts.append(f"chunk {c.get('nb')}")
            parts.append("unrolled" if c.get("full_unroll") else "blocked")
    else:
        parts.append(f"nb {c.get('nb')}")
        if routine != "potrs":  # the cooperative kernels are left-looking whatever the field says
            parts.append("left" if c.get("warps_per_matrix", 0) > 0 else c.get("looking", "?"))
        parts.append("unrolled" if c.get("full_unroll") else "partial")
        if layout == "chunked":
            parts.append(f"chunk {c.get('chunk_size')}")
    parts.append(f"{c.get('threads_per_block')} t/b")
    if routine != "potrf" and c.get("nrhs_block", 1) > 1:
        parts.append(f"nrhs_block {c.get('nrhs_block')}")
    if c.get("staged"):  # the column-major fields above do not apply
        parts = [f"staged, panel {c.get('nb')}, {c.get('warps_per_matrix')} warps x {c.get('matrices_per_block')} matrices"]
        if c.get("tensor_cores"):
            parts.append("tensor cores")
    elif c.get("warps_per_matrix", 0) > 0 and layout != "column_major":
        parts.append(f"cooperative {c.get('warps_per_matrix')} warps")
        if c.get("grid_blocks_per_sm", 0) > 0:
            parts.append(f"grid {c.get('grid_blocks_per_sm')}/SM")
    if c.get("max_registers", 0) > 0:
        parts.append(f"cap {c.get('max_registers')} regs")
    if c.get("through_interleaved"):
        parts.append("through interleaved")
    if c.get("solve_warps_per_matrix", 0) > 0:  # posv in two kernels
        parts.append(f"then potrs nb {c.get('solve_nb') or 'default'}, {c.get('solve_warps_per_matrix')} warps")
    return ", ".join(parts)


def best_by(rows, key):
    """{(group key, value): best GFLOP/s} over rows, key(row) -> (group, value) or None."""
    best = {}
    for r in rows:
        k = key(r)
        if k is None:
            continue
        if r["gflops"] > best.get(k, 0):
            best[k] = r["gflops"]
    return best


def markdown(table, rows, out):
    lines = [
        "# Autotuning report",
        "",
        f"Device {table.get('device')}, {table.get('arch')}, CUDA {table.get('cuda_version')}, "
        f"commit {table.get('commit')}, {table.get('date')}, batch {table.get('batch')}.",
        "",
        f"{len(table['entries'])} table entries; {len(rows)} timed candidates in the log.",
        "",
    ]
    groups = collections.defaultdict(list)
    for e in table["entries"]:
        groups[(e["routine"], e["precision"], e["layout"])].append(e)
    for (routine, prec, layout), entries in sorted(groups.items()):
        lines += [f"## {routine} {prec} {layout}", ""]
        lines += ["| n | GFLOP/s | ms | best | runner-up GFLOP/s | runner-up | timed |",
                  "|---:|---:|---:|---|---:|---|---:|"]
        for e in sorted(entries, key=lambda e: e["n"]):
            b, r = e["best"], e.get("runner_up")
            lines.append(
                f"| {e['n']} | {b['gflops']:.1f} | {b['ms']:.4f} | {short_config(b['config'], layout, routine)} | "
                + (f"{r['gflops']:.1f} | {short_config(r['config'], layout, routine)}" if r else "- | -")
                + f" | {e.get('candidates', '')} |")
        lines.append("")
    path = os.path.join(out, "autotune.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def save(fig, out, name, written):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


def plot_all(table, rows, out, selected):
    written = []
    by_rp = collections.defaultdict(list)
    for r in rows:
        by_rp[(r["routine"], r["precision"])].append(r)
    entry_rp = collections.defaultdict(list)
    for e in table["entries"]:
        entry_rp[(e["routine"], e["precision"])].append(e)

    # best vs n per layout, from the table
    for (routine, prec), entries in sorted(entry_rp.items()):
        fig, ax = plt.subplots(figsize=(7, 4))
        for layout in LAYOUTS:
            pts = sorted((e["n"], e["best"]["gflops"]) for e in entries if e["layout"] == layout)
            if pts:
                ax.plot(*zip(*pts), marker=".", label=layout)
        ax.set(xlabel="n", ylabel="GFLOP/s", title=f"{routine} {prec}: best per layout ({table.get('device')})")
        ax.grid(alpha=0.3)
        ax.legend()
        save(fig, out, f"best_vs_n_{routine}_{prec}.png", written)

    for (routine, prec), rs in sorted(by_rp.items()):
        ns = sorted({r["n"] for r in rs})
        sel = [n for n in selected if n in ns] or ns[-1:]

        # Fig. 15: best vs nb for selected n, per interleaved family
        for layout in ("interleaved", "chunked"):
            best = best_by(rs, lambda r: ((r["n"], r["config"]["nb"]) if r["layout"] == layout else None))
            if not best:
                continue
            fig, ax = plt.subplots(figsize=(7, 4))
            for n in sel:
                pts = sorted((nb, g) for (m, nb), g in best.items() if m == n)
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=f"n = {n}")
            ax.set(xlabel="tile size nb", ylabel="best GFLOP/s", title=f"{routine} {prec} {layout}: tile size")
            ax.grid(alpha=0.3)
            ax.legend()
            save(fig, out, f"nb_{routine}_{prec}_{layout}.png", written)

        # Fig. 16: looking order (interleaved family, factorisations)
        if routine != "potrs":
            best = best_by(rs, lambda r: ((r["n"], r["config"]["looking"]) if r["layout"] == "interleaved" else None))
            if best:
                fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
                for look in LOOKINGS:
                    pts = sorted((n, g) for (n, l), g in best.items() if l == look)
                    if pts:
                        a1.plot(*zip(*pts), marker=".", label=f"{look}-looking")
                a1.set(xlabel="n", ylabel="best GFLOP/s", title=f"{routine} {prec} interleaved: looking order")
                a1.grid(alpha=0.3)
                a1.legend()
                width = 0.8 / len(LOOKINGS)
                for i, look in enumerate(LOOKINGS):
                    a2.bar([k + i * width for k in range(len(sel))], [best.get((n, look), 0) for n in sel], width,
                           label=look)
                a2.set_xticks([k + width for k in range(len(sel))], [str(n) for n in sel])
                a2.set(xlabel="n", ylabel="best GFLOP/s", title="selected n")
                a2.legend()
                save(fig, out, f"looking_{routine}_{prec}.png", written)

        # Fig. 17: chunked vs not
        best = best_by(rs, lambda r: ((r["n"], r["layout"]) if r["layout"] in ("interleaved", "chunked") else None))
        if {l for (_, l) in best} == {"interleaved", "chunked"}:
            fig, ax = plt.subplots(figsize=(7, 4))
            for layout, label in (("interleaved", "no chunking"), ("chunked", "chunked")):
                pts = sorted((n, g) for (n, l), g in best.items() if l == layout)
                ax.plot(*zip(*pts), marker=".", label=label)
            ax.set(xlabel="n", ylabel="best GFLOP/s", title=f"{routine} {prec}: interleaved with and without chunks")
            ax.grid(alpha=0.3)
            ax.legend()
            save(fig, out, f"chunking_{routine}_{prec}.png", written)

        # Fig. 18: chunk size for selected n
        best = best_by(rs, lambda r: ((r["n"], r["config"]["chunk_size"]) if r["layout"] == "chunked" else None))
        if best:
            fig, ax = plt.subplots(figsize=(7, 4))
            for n in sel:
                pts = sorted((c, g) for (m, c), g in best.items() if m == n)
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=f"n = {n}")
            ax.set_xscale("log", base=2)
            ax.set(xlabel="chunk size", ylabel="best GFLOP/s", title=f"{routine} {prec} chunked: chunk size")
            ax.grid(alpha=0.3)
            ax.legend()
            save(fig, out, f"chunk_size_{routine}_{prec}.png", written)

        # Fig. 19: partial vs full unrolling (interleaved family)
        best = best_by(rs, lambda r: ((r["n"], bool(r["config"]["full_unroll"]))
                                      if r["layout"] in ("interleaved", "chunked") else None))
        if any(u for (_, u) in best):
            fig, ax = plt.subplots(figsize=(7, 4))
            for unroll, label in ((False, "partial unrolling (tile operations)"), (True, "full unrolling")):
                pts = sorted((n, g) for (n, u), g in best.items() if u == unroll)
                if pts:
                    ax.plot(*zip(*pts), marker=".", label=label)
            ax.set(xlabel="n", ylabel="best GFLOP/s", title=f"{routine} {prec} interleaved: unrolling")
            ax.grid(alpha=0.3)
            ax.legend()
            save(fig, out, f"unroll_{routine}_{prec}.png", written)
    return written


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", required=True, help="tuning table written by autotune --output")
    p.add_argument("--log", required=True, nargs="+", help="candidates logs written by autotune --log")
    p.add_argument("--out", required=True, help="folder for autotune.md and the PNGs")
    p.add_argument("--n", default="16,32,64,100,128", help="sizes of the per-n plots (comma-separated)")
    a = p.parse_args()
    try:
        selected = [int(x) for x in a.n.split(",") if x]
    except ValueError:
        raise SystemExit(f"autotune_report: invalid --n '{a.n}': comma-separated integers")
    try:
        table = read_table(a.table)
        rows = [r for path in a.log for r in read_log(path)]
    except (OSError, EOFError, lzma.LZMAError) as e:  # missing or unreadable file, broken archive
        raise SystemExit(f"autotune_report: {e}")
    os.makedirs(a.out, exist_ok=True)
    md = markdown(table, rows, a.out)
    pngs = plot_all(table, rows, a.out, selected)
    print(f"autotune_report: {md} and {len(pngs)} plots in {a.out}")


if __name__ == "__main__":
    main()
