#!/usr/bin/env python3
"""spam's local DIC (spam.DIC.ldic) as one whole call, the peer `dvc bench --spam` times beside dvc's own
whole call: reads the two raw volumes, correlates the points of a dvc result file, writes JSON.

    spam_correlate.py --reference ref.raw --deformed def.raw --dims ZxYxX [--dtype float32]
                      --points-from result.h5 --subset 32 [--order 3] [--processes N] --out spam.json
The points are the /points/centre of the dvc result (spam's nodes are whole voxels: each centre is
rounded, and the nodes are written back so that the caller compares them with the truth there).
spam's window is 2 * (subset // 2) + 1 voxels per axis (33 for a subset of 32). spam starts from zero
displacement (the pairs the bench makes move by a fraction of a voxel).
"""
import argparse
import json
import os
import sys
import time

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--deformed", required=True)
    ap.add_argument("--dims", required=True, help="ZxYxX")
    ap.add_argument("--dtype", default="float32", choices=["float32", "uint16", "uint8"])
    ap.add_argument("--points-from", required=True, help="a dvc correlate result (HDF5): its /points/centre")
    ap.add_argument("--subset", type=int, required=True)
    ap.add_argument("--order", type=int, default=3, help="spam's interpolation order (3: cubic, 1: linear)")
    ap.add_argument("--processes", type=int, default=os.cpu_count())
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import spam.DIC  # after the arguments: a usage error needs no spam
    import importlib.metadata
    dims = tuple(int(x) for x in a.dims.lower().replace(",", "x").split("x"))
    t0 = time.time()
    im1 = np.fromfile(a.reference, dtype=a.dtype).reshape(dims).astype(np.float32)
    im2 = np.fromfile(a.deformed, dtype=a.dtype).reshape(dims).astype(np.float32)
    with h5py.File(a.points_from, "r") as f:
        centres = f["/points/centre"][:]
    read_s = time.time() - t0
    nodes = np.round(centres).astype(int)
    hws = np.array([a.subset // 2] * 3)
    t0 = time.time()
    # spam prints a progress table to stdout: kept off ours.
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1)
    os.dup2(devnull, 1)
    try:
        phi, rs, _, its, _ = spam.DIC.ldic(im1, im2, nodes, hws, processes=a.processes, interpolationOrder=a.order,
                                           deltaPhiMin=1e-4, maxIterations=50)
    finally:
        os.dup2(saved, 1)
        os.close(devnull)
    ldic_s = time.time() - t0
    out = {"spam": importlib.metadata.version("spam"), "processes": a.processes, "order": a.order, "window": int(2 * hws[0] + 1),
           "nodes": nodes.tolist(), "displacement": phi[:, 0:3, 3].tolist(), "converged": (rs == 2).astype(int).tolist(),
           "iterations": np.asarray(its).astype(int).tolist(), "read_s": read_s, "ldic_s": ldic_s}
    with open(a.out, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
