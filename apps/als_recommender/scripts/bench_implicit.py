#!/usr/bin/env python3
"""The `implicit` side of `als bench`: fits implicit's ALS (CPU, and GPU when its CUDA extension
loads, i.e. `import rmm` works) on the same HDF5 training file with the same k, lambda, alpha and
iteration count, and writes its timings (JSON) and factors (HDF5) for `als bench` to evaluate with
its own code on the same test set.

Confidence: ours is c = 1 + alpha r; implicit's is c = alpha * (its data). It is handed 1 + alpha r as
data with alpha = 1, so both fit the same objective. Seconds per iteration are the wall clock between
two iteration callbacks, after a device synchronisation on the GPU (implicit launches asynchronously),
median of iterations 2..N; set-up is the rest of fit()'s time (transposes, uploads, allocation).

usage: bench_implicit.py --train FILE --factors K --iterations N --lambda L --alpha A --seed S
                         --json OUT.json --factors-out OUT.h5 [--no-cpu] [--no-gpu]"""
import argparse
import json
import os
import statistics
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import als_h5  # noqa: E402


def gpu_sync():
    try:
        import cupy
        cupy.cuda.Device().synchronize()
        return
    except Exception:
        pass
    try:
        import torch
        torch.cuda.synchronize()
    except Exception:
        pass


def fit(model_cls, data, args, gpu):
    model = model_cls(factors=args.factors, regularization=args.lam, alpha=1.0, iterations=args.iterations,
                      random_state=args.seed, calculate_training_loss=False,
                      **({"use_cg": False} if args.exact else {}))
    stamps = []

    def callback(iteration, elapsed, loss):
        if gpu:
            gpu_sync()
        stamps.append(time.perf_counter())

    start = time.perf_counter()
    model.fit(data, show_progress=False, callback=callback)
    if gpu:
        gpu_sync()
    total = time.perf_counter() - start
    if len(stamps) != args.iterations:
        raise SystemExit(f"implicit called back {len(stamps)} times for {args.iterations} iterations")
    # The first iteration's interval starts at fit(): it holds the set-up, so it is measured as the
    # time since the set-up ended, estimated by the median iteration.
    per_iter = [b - a for a, b in zip(stamps, stamps[1:])]
    median = statistics.median(per_iter)
    setup = total - median * args.iterations
    if gpu:
        model = model.to_cpu()
    return model, median, setup, per_iter


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True)
    p.add_argument("--factors", type=int, required=True)
    p.add_argument("--iterations", type=int, required=True)
    p.add_argument("--lambda", dest="lam", type=float, required=True)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--exact", action="store_true", default=os.environ.get("IMPLICIT_EXACT") == "1",
                   help="implicit's exact Cholesky solves (use_cg=False) instead of its default 3 CG steps "
                        "(default from IMPLICIT_EXACT=1, so that `als bench` can ask for it)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", required=True)
    p.add_argument("--factors-out", required=True)
    p.add_argument("--no-cpu", action="store_true")
    p.add_argument("--no-gpu", action="store_true")
    a = p.parse_args()
    if a.iterations < 2:
        raise SystemExit("--iterations must be >= 2")
    try:
        import implicit
        import implicit.gpu
        from implicit.cpu.als import AlternatingLeastSquares as CpuALS
    except ImportError as e:
        raise SystemExit(f"implicit is not importable here: {e}")
    train, users, items, feedback = als_h5.read_ratings(a.train)
    data = train.copy()
    data.data = (1.0 + a.alpha * data.data).astype(np.float32)
    runs = []
    kinds = []
    if not a.no_gpu:
        if implicit.gpu.HAS_CUDA:
            kinds.append("gpu")
        else:
            print("implicit GPU: not available here (implicit.gpu.HAS_CUDA is False: no rmm or no CUDA)", flush=True)
    if not a.no_cpu:
        kinds.append("cpu")
    with h5py.File(a.factors_out, "w") as out:
        for kind in kinds:
            if kind == "gpu":
                from implicit.gpu.als import AlternatingLeastSquares as GpuALS
                model, median, setup, per_iter = fit(GpuALS, data, a, gpu=True)
                device = "GPU"
                try:
                    import cupy
                    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
                except Exception:
                    pass
            else:
                model, median, setup, per_iter = fit(CpuALS, data, a, gpu=False)
                device = f"CPU ({os.cpu_count()} cores)"
            uf = np.asarray(model.user_factors, dtype=np.float32)[:, :a.factors]
            itf = np.asarray(model.item_factors, dtype=np.float32)[:, :a.factors]
            out.create_dataset(f"{kind}/users", data=np.ascontiguousarray(uf))
            out.create_dataset(f"{kind}/items", data=np.ascontiguousarray(itf))
            runs.append({"tool": "implicit", "backend": kind, "device": device, "layout": "-", "factors": a.factors,
                         "iterations": a.iterations, "seconds_per_iteration": median, "setup_seconds": setup,
                         "iteration_seconds": per_iter,
                         "solver": ("exact Cholesky (use_cg=False)" if a.exact
                                    else "conjugate gradient, 3 steps (implicit's default)"),
                         "implicit_version": implicit.__version__, "factors_group": f"/{kind}"})
            print(f"implicit {kind} ({device}) k {a.factors}: {median:.4f} s/iter, setup {setup:.2f} s", flush=True)
    with open(a.json, "w") as f:
        json.dump(runs, f, indent=2)


if __name__ == "__main__":
    main()
