#!/usr/bin/env python3
"""dvc on the real TomoWarp2 notched-sample pair (../shared/data/volumes/tomowarp2-notched/): runs
`dvc correlate`, locates the crack in the deformed scan (a thin dark surface inside the material),
and reports ZNCC away from the crack, the statuses of the points the crack cuts, and a picture of
the displacement field in which the crack opening shows as a jump.

    apps/dic_volume/scripts/real_data.py --dvc build/apps/dic_volume/dvc --out apps/dic_volume/results
Writes DIR/tomowarp2_notched.{md,json,png}; the HDF5/VTI results stay in --work (not committed).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import h5py
import numpy as np


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_data = os.path.normpath(os.path.join(here, "../../../../shared/data/volumes/tomowarp2-notched"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dvc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--work", default="/tmp/dvc_tomowarp2")
    ap.add_argument("--subset", type=int, default=24)
    ap.add_argument("--spacing", type=int, default=8)
    ap.add_argument("--defaults", action="store_true", help="dvc correlate's own defaults (no --subset, --spacing, --presmooth)")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--presmooth", type=float, default=0.0, help="dvc correlate --presmooth (Gaussian sigma, voxels)")
    ap.add_argument("--tag", default="tomowarp2_notched", help="name of the output files")
    args = ap.parse_args()
    ref = os.path.join(args.data, "reference_192x192x192_u8.raw")
    dfm = os.path.join(args.data, "deformed_192x192x192_u8.raw")
    if not os.path.exists(ref):
        print(f"real_data.py: skipped: {ref} not present")
        return
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    res = os.path.join(args.work, "tomowarp2.h5")
    cmd = [args.dvc, "correlate", "--reference", ref, "--deformed", dfm, "--dims", "192x192x192", "--dtype", "uint8",
           "--backend", args.backend, "-o", res, "--force", "-q",
           "--vti", os.path.join(args.work, "tomowarp2.vti"), "--png", os.path.join(args.work, "tomowarp2_slice.png"),
           "--summary-json", os.path.join(args.work, "summary.json")]
    if not args.defaults:
        cmd += ["--subset", str(args.subset), "--spacing", str(args.spacing), "--presmooth", str(args.presmooth)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    if r.returncode != 0:
        sys.exit(f"real_data.py: dvc correlate failed ({r.returncode})")
    summary = json.load(open(os.path.join(args.work, "summary.json")))

    g = np.fromfile(dfm, np.uint8).reshape(192, 192, 192).astype(np.float32)
    from scipy import ndimage
    # The crack: a thin sheet darker than its neighbourhood (after a light smoothing against the
    # noise), inside the material (not the air at the border); its largest connected pieces, not pores.
    smooth = ndimage.gaussian_filter(g, 1.0)
    local = ndimage.uniform_filter(smooth, 11)
    material = ndimage.binary_erosion(ndimage.uniform_filter(g, 15) > 0.6 * np.median(g), iterations=6)
    crack = (local - smooth > 1.5 * smooth[material].std()) & material
    crack = ndimage.binary_opening(crack, iterations=1)
    labels, n = ndimage.label(crack)
    if n:
        sizes = ndimage.sum(crack, labels, range(1, n + 1))
        crack = np.isin(labels, 1 + np.flatnonzero(sizes >= 0.2 * sizes.max()))  # the large connected sheet(s), not pores
    distance = ndimage.distance_transform_edt(~crack)

    with h5py.File(res) as f:
        c = f["/points/centre"][:]
        u = f["/points/displacement"][:]
        zncc = f["/points/zncc"][:]
        status = f["/points/status"][:]
        shape = [int(v) for v in f["/grid"].attrs["shape"]]
        gi = f["/points/grid_index"][:]
        # The settings the run used (dvc's defaults with --defaults).
        args.subset, args.spacing = int(f.attrs["subset"]), int(f.attrs["spacing"])
        interpolation = f.attrs["interpolation"]
        interpolation = interpolation.decode() if isinstance(interpolation, bytes) else str(interpolation)
    args.presmooth = summary.get("presmooth", args.presmooth) if not args.defaults else "default"
    ci = np.round(c).astype(int).clip(0, 191)
    d = distance[ci[:, 0], ci[:, 1], ci[:, 2]]
    inmat = material[ci[:, 0], ci[:, 1], ci[:, 2]]
    half_diag = np.sqrt(3) * args.subset / 2
    away = (d > half_diag) & inmat
    cut = (d <= args.subset / 2) & inmat
    names = ["converged", "iteration_limit", "diverged", "flat_subset", "outside_volume", "low_correlation"]
    report = {
        "points": int(len(status)), "status": {n_: int((status == i).sum()) for i, n_ in enumerate(names)},
        "away_from_crack": int(away.sum()), "away_zncc_ge_0.9": float((zncc[away] >= 0.9).mean()) if away.any() else None,
        "away_converged": float((status[away] == 0).mean()) if away.any() else None,
        "cut_by_crack": int(cut.sum()), "cut_flagged": float((status[cut] != 0).mean()) if cut.any() else None,
        "cut_zncc_median": float(np.median(zncc[cut])) if cut.any() else None,
        "cut_converged": float((status[cut] == 0).mean()) if cut.any() else None,
        "away_zncc_median": float(np.median(zncc[away])) if away.any() else None,
        "timings_s": summary["timings_s"], "backend": summary["backend"], "subset": args.subset, "spacing": args.spacing,
        "presmooth": args.presmooth, "interpolation": interpolation,
    }
    commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report["provenance"] = {"machine": f"{platform.node()} ({os.cpu_count()} cores)", "commit": commit,
                            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    json.dump(report, open(os.path.join(args.out, args.tag + ".json"), "w"), indent=1)

    # Picture: a z slice through the middle: the deformed scan with the crack, |u| and u components, ZNCC, status.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    grid = np.full(shape[0] * shape[1] * shape[2], np.nan)
    def on_grid(values, mask=None):
        a = grid.copy()
        m = np.ones(len(values), bool) if mask is None else mask
        a[gi[m]] = values[m]
        return a.reshape(shape)
    zmid = shape[0] // 2
    zvox = int(round(c[gi // (shape[1] * shape[2]) == zmid][0, 0]))
    ok = status == 0
    extent = [c[:, 2].min() - args.spacing / 2, c[:, 2].max() + args.spacing / 2, c[:, 1].max() + args.spacing / 2, c[:, 1].min() - args.spacing / 2]
    fig, ax = plt.subplots(2, 3, figsize=(14, 9))
    ax[0, 0].imshow(g[zvox], cmap="gray")
    ax[0, 0].contour(crack[zvox], levels=[0.5], colors="r", linewidths=0.6)
    ax[0, 0].set_title(f"deformed scan, z = {zvox} (red: detected crack)")
    mag = np.linalg.norm(u, axis=1)
    panels = [(on_grid(mag, ok)[zmid], "|u| (voxel), converged points", "viridis"),
              (on_grid(u[:, 1], ok)[zmid], "u_y (voxel)", "coolwarm"),
              (on_grid(u[:, 2], ok)[zmid], "u_x (voxel)", "coolwarm"),
              (on_grid(zncc.astype(float))[zmid], "ZNCC", "magma"),
              (on_grid(status.astype(float))[zmid], "status (0 converged, 2 diverged, 3 flat, 5 low ZNCC)", "tab10")]
    for a, (img, title, cmap) in zip(ax.flat[1:], panels):
        kw = {"vmin": 0.5, "vmax": 1.0} if title == "ZNCC" else ({"vmin": 0, "vmax": 9} if title.startswith("status") else {})
        im = a.imshow(img, cmap=cmap, extent=extent, interpolation="nearest", **kw)
        a.contour(np.arange(192), np.arange(192), crack[zvox], levels=[0.5], colors="k", linewidths=0.5)
        a.set_xlim(extent[0], extent[1]); a.set_ylim(extent[2], extent[3])
        a.set_title(title)
        fig.colorbar(im, ax=a, shrink=0.8)
    p = report["provenance"]
    fig.suptitle(f"dvc on the TomoWarp2 notched pair (192³ u8): subset {args.subset}³, spacing {args.spacing}, backend {report['backend']} — "
                 f"commit {p['commit']}, {p['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, args.tag + ".png"), dpi=90)

    s = report
    lines = [f"# dvc on the real TomoWarp2 notched pair", "",
             f"Machine {p['machine']}, commit {p['commit']}, {p['date']}, backend {s['backend']}; subset {args.subset}³, spacing {args.spacing}, "
             f"presmooth {args.presmooth}{' (dvc correlate with no option but the inputs and the backend)' if args.defaults else ''}, default settings otherwise ({s['interpolation']} interpolation, seeded FFT start, ZNCC threshold 0.9).", "",
             f"- points: {s['points']}; statuses: " + ", ".join(f"{k} {v}" for k, v in s["status"].items()),
             f"- away from the crack (material, centre farther than the subset's half-diagonal from the crack): {s['away_from_crack']} points, "
             f"ZNCC ≥ 0.9 at {100 * s['away_zncc_ge_0.9']:.1f} %, converged {100 * s['away_converged']:.1f} %, median ZNCC {s['away_zncc_median']:.3f}",
             f"- cut by the crack (centre within half a subset of it): {s['cut_by_crack']} points, flagged (status ≠ 0) {100 * s['cut_flagged']:.1f} %, "
             f"converged {100 * s['cut_converged']:.1f} %, median ZNCC {s['cut_zncc_median']:.3f}",
             f"- time: " + ", ".join(f"{k} {v:.2f} s" for k, v in s["timings_s"].items()), "",
             f"Picture: `{args.tag}.png` (the displacement components jump across the crack: its opening)."]
    open(os.path.join(args.out, args.tag + ".md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
