#!/usr/bin/env python3
"""Figures of the BEM application (matplotlib):

  plot_bem.py convergence CSV [CSV ...] -o errors.png   far-field error vs Mie against mean edge h
                                                        (CSV files from `bem validate --csv`)
  plot_bem.py far-field far_field_f0.csv -o polar.png   polar plot of the scattering level (dB re 1 m^2),
                                                        with the Mie series when the CSV has it
  plot_bem.py grid grid_f0.vtk -o field.png             map of |total field| and Re(total field) on the plane
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def convergence(files, output):
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for path in files:
        rows = list(csv.DictReader(open(path)))
        h = [float(r["mean_edge"]) for r in rows]
        err = [float(r["far_field_error"]) for r in rows]
        label = f"{rows[0]['formulation']}, k = {rows[0]['wavenumber']}"
        ax.loglog(h, err, "o-", label=label)
    h0, e0 = h[-1], err[-1]
    ax.loglog([h0, h0 * 4], [e0, e0 * 16], "k--", lw=0.8, label="slope 2 (h$^2$)")
    ax.set_xlabel("mean edge h (unit sphere)")
    ax.set_ylabel("far-field relative L2 error vs Mie")
    ax.set_title("Plane wave on the unit sphere: error under refinement")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(output, dpi=120)


def far_field(path, output):
    rows = list(csv.DictReader(open(path)))
    theta = [math.radians(float(r["theta_deg"])) for r in rows]
    fig = plt.figure(figsize=(5.5, 5.5))
    ax = fig.add_subplot(projection="polar")
    ax.plot(theta, [float(r["level_db"]) for r in rows], label="bem")
    if "mie_level_db" in rows[0]:
        ax.plot(theta, [float(r["mie_level_db"]) for r in rows], "--", label="Mie series")
    ax.set_title("scattering level 10 log10(4 pi |F|^2) [dB re 1 m^2]\n(0 deg = incident direction)", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=120)


def read_vtk_grid(path):
    lines = open(path).read().split("\n")
    nu, nv = (int(v) for v in lines[4].split()[1:3])
    npts = nu * nv
    points = [tuple(map(float, l.split())) for l in lines[6:6 + npts]]
    fields, i = {}, 6 + npts
    while i < len(lines):
        if lines[i].startswith("SCALARS"):
            name = lines[i].split()[1]
            fields[name] = [float(v) for v in lines[i + 2:i + 2 + npts]]
            i += 2 + npts
        else:
            i += 1
    return nu, nv, points, fields


def grid(path, output):
    import numpy as np
    nu, nv, points, fields = read_vtk_grid(path)
    p = np.array(points).reshape(nv, nu, 3)
    varying = [c for c in range(3) if np.ptp(p[..., c]) > 0]
    extent = [p[0, 0, varying[0]], p[0, -1, varying[0]], p[0, 0, varying[1]], p[-1, 0, varying[1]]]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.3))
    for ax, name, cmap in zip(axes, ["total_abs", "total_real"], ["viridis", "RdBu_r"]):
        image = ax.imshow(np.array(fields[name]).reshape(nv, nu), origin="lower", extent=extent, cmap=cmap)
        ax.set_title(name.replace("_", " "))
        ax.set_xlabel("xyz"[varying[0]])
        ax.set_ylabel("xyz"[varying[1]])
        fig.colorbar(image, ax=ax, shrink=0.85)
    fig.tight_layout()
    fig.savefig(output, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["convergence", "far-field", "grid"])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if args.kind == "convergence":
        convergence(args.inputs, args.output)
    elif args.kind == "far-field":
        far_field(args.inputs[0], args.output)
    else:
        grid(args.inputs[0], args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
