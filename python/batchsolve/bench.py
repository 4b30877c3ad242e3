"""python -m batchsolve.bench: batchsolve from Python side by side with the C++ call and the framework
peers (torch.linalg.cholesky_ex/cholesky + cholesky_solve, cupy.linalg.cholesky, jax.numpy.linalg.cholesky
when present) on the same arrays, the same device and your own sizes.

Every implementation is timed the same way: S input sets (enough that together they exceed twice the
GPU's L2 cache) are restored from a pristine copy outside the timed region, then the S calls run back to
back between two synchronisations; the time per call is the median over --repeat rounds. "C++" runs the
same library call on the same arrays from a C++ loop (the extension's raw timing entry), so

    overhead  = Python call - C++ call             (the issue's target: <= 10 us at batch 16384)
    kept      = speed-up of Python over the peer / speed-up of C++ over the peer = C++ time / Python time
                (target >= 0.90 against torch.linalg.cholesky_ex)

are measured, not assumed. "issue" columns time the host side only (until the last call returned,
before the synchronisation): the launch overhead that a GPU-bound loop hides.

Ratios over a peer compare like with like (docs/benchmarking.md):
    speedup_alloc    peer's allocating call / our allocating call (a plain bs.potrf(a), new outputs)
                     - torch.linalg.cholesky_ex(a), cupy, jax, numpy all return new arrays
    speedup_inplace  torch.linalg.cholesky_ex(a, out=(L, info)) [+ cholesky_solve(b, L, out=X)] into
                     outputs allocated once / our in-place call (overwrite_a, info=, overwrite_b)
    speedup_cpp      the same out= peer / the C++ loop (in place)
Every peer synchronises once per round, after its last call, as ours: JAX's results are kept and
waited for (block_until_ready) at the end of the round, not after each call. On the CPU, numpy runs
both on one thread and split over as many threads as the CPU backend uses (a thread pool; NumPy's
linalg releases the GIL); the faster of the two is the peer.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import batchsolve as bs
from batchsolve import _batchsolve as _raw
from batchsolve._linalg import classify

FLOPS = {"potrf": lambda n, r: n**3 / 3, "potrs": lambda n, r: 2 * n * n * r, "posv": lambda n, r: n**3 / 3 + 2 * n * n * r}


def parse_list(text: str, kind=str) -> list:
    return [kind(v) for v in text.split(",") if v]


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m batchsolve.bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--routine", default="potrf,posv", help="comma list of potrf, potrs, posv (default potrf,posv)")
    p.add_argument("--precision", default="s,d", help="comma list of s, d, c, z (default s,d)")
    p.add_argument("--n", default="8,16,32,64,128", help="comma list of orders (default 8,16,32,64,128)")
    p.add_argument("--batch", default="16384,100000", help="comma list of batch sizes (default 16384,100000)")
    p.add_argument("--nrhs", type=int, default=1, help="right-hand sides of potrs/posv (default 1)")
    p.add_argument("--device", choices=["cuda", "cpu"], default=None,
                   help="cuda (PyTorch tensors on GPU 0) or cpu (NumPy arrays, the CPU backend); default cuda when available")
    p.add_argument("--peers", default="torch,cupy,jax", help="framework peers to time where installed (default torch,cupy,jax)")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds per implementation; the median is reported (default 5)")
    p.add_argument("--max-sets", type=int, default=16, help="most input sets per round (default 16)")
    p.add_argument("--time-limit", type=float, default=0, help="start no new case after this many seconds (0: no limit)")
    p.add_argument("--json", help="write every row, with the machine and versions, to this JSON file")
    p.add_argument("--table", help="write the table (Markdown) to this file as well")
    p.add_argument("--plot", help="write a PNG of the speed-ups over the peer to this file (matplotlib)")
    p.add_argument("--targets-out", help="write the targets (overhead, kept speed-up) per case, measured and met, to this JSON file")
    p.add_argument("--seed", type=int, default=None, help="seed of the generated matrices (default: fresh, printed)")
    return p.parse_args(argv)


# ---- arrays ------------------------------------------------------------------------------------------


class TorchArrays:
    """Input sets as PyTorch CUDA tensors (C-order, as PyTorch users hold them)."""

    def __init__(self, seed: int):
        import torch

        self.torch = torch
        self.device = torch.device("cuda", 0)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.dtypes = {"s": torch.float32, "d": torch.float64, "c": torch.complex64, "z": torch.complex128}
        self.l2_bytes = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)

    def free_bytes(self) -> int:
        return self.torch.cuda.mem_get_info(0)[0]

    def spd(self, count: int, n: int, precision: str):
        t = self.torch
        dtype = self.dtypes[precision]
        g = t.randn((count, n, n), dtype=dtype, device=self.device, generator=self.generator)
        a = g @ g.mH
        del g
        a.div_(n).diagonal(dim1=-2, dim2=-1).add_(1.0)  # eigenvalues in [1, ~5]: well conditioned
        return a

    def rhs(self, count: int, n: int, nrhs: int, precision: str):
        b = self.torch.randn((count, nrhs, n), dtype=self.dtypes[precision], device=self.device, generator=self.generator)
        return b.mT  # column-major right-hand sides: solved where they are

    def sets_like(self, x, sets: int):
        out = self.torch.empty((sets,) + tuple(x.shape), dtype=x.dtype, device=x.device)
        if x.stride()[-2] == 1 and x.shape[-1] > 1:  # keep column-major matrices column-major
            out = self.torch.empty((sets,) + tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2]), dtype=x.dtype, device=x.device).mT
        return out

    def restore(self, sets, pristine) -> None:
        sets.copy_(pristine.unsqueeze(0).expand_as(sets))

    def info_sets(self, sets: int, count: int):
        return self.torch.empty((sets, count), dtype=self.torch.int32, device=self.device)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def to_host(self, x) -> np.ndarray:
        return x.cpu().numpy()

    def release(self) -> None:
        # The peers' pools keep what they freed: give it back before the next case's sets.
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


class NumpyArrays:
    """Input sets as NumPy arrays: the CPU backend (a check of the bench itself, and CPU figures)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.dtypes = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
        self.l2_bytes = 0

    def free_bytes(self) -> int:
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return 1 << 32

    def spd(self, count: int, n: int, precision: str):
        dtype = self.dtypes[precision]
        g = self.rng.standard_normal((count, n, n))
        if precision in "cz":
            g = g + 1j * self.rng.standard_normal((count, n, n))
        a = g @ g.conj().transpose(0, 2, 1) / n + np.eye(n)
        return a.astype(dtype)

    def rhs(self, count: int, n: int, nrhs: int, precision: str):
        b = self.rng.standard_normal((count, nrhs, n)).astype(self.dtypes[precision])
        return b.transpose(0, 2, 1)

    def sets_like(self, x, sets: int):
        if x.strides[-2] == x.itemsize and x.shape[-1] > 1:
            return np.empty((sets,) + x.shape[:-2] + (x.shape[-1], x.shape[-2]), dtype=x.dtype).swapaxes(-1, -2)
        return np.empty((sets,) + x.shape, dtype=x.dtype)

    def restore(self, sets, pristine) -> None:
        sets[...] = pristine[None]

    def info_sets(self, sets: int, count: int):
        return np.empty((sets, count), dtype=np.int32)

    def synchronize(self) -> None:
        pass

    def to_host(self, x) -> np.ndarray:
        return x

    def release(self) -> None:
        pass


# ---- one case ----------------------------------------------------------------------------------------


def median_time(arrays, restore, calls, repeat: int) -> tuple[float, float]:
    """(time per call, host issue time per call), medians over `repeat` rounds of all `calls`. A call
    list may carry a `finish` attribute: run after the last call of a round, before the device
    synchronisation (JAX: wait for the round's results, whose launches its runtime may still hold)."""
    totals, issues = [], []
    finish = getattr(calls, "finish", None)
    for _ in range(repeat):
        restore()
        arrays.synchronize()
        start = time.perf_counter()
        for call in calls:
            call()
        issued = time.perf_counter()
        if finish is not None:
            finish()
        arrays.synchronize()
        done = time.perf_counter()
        totals.append((done - start) / len(calls))
        issues.append((issued - start) / len(calls))
    return statistics.median(totals), statistics.median(issues)


def run_case(arrays, routine: str, precision: str, n: int, count: int, nrhs: int, repeat: int, max_sets: int,
             peers: dict) -> dict:
    a0 = arrays.spd(count, n, precision)
    b0 = arrays.rhs(count, n, nrhs, precision) if routine != "potrf" else None
    itemsize = {"s": 4, "d": 8, "c": 8, "z": 16}[precision]
    set_bytes = count * n * (n + (nrhs if b0 is not None else 0)) * itemsize
    # At least 8 calls per round where memory allows: with one or two calls the host time of a single
    # launch is not overlapped by anything and the round measures latency instead of throughput.
    sets = max(8, min(max_sets, math.ceil(2 * arrays.l2_bytes / max(set_bytes, 1)) if arrays.l2_bytes else 1))
    # Room for the sets, the pristine copy and a peer's outputs (a few times one set).
    sets = max(1, min(sets, int(0.5 * arrays.free_bytes() / max(set_bytes, 1)) - 3))
    a_sets = arrays.sets_like(a0, sets)
    b_sets = arrays.sets_like(b0, sets) if b0 is not None else None
    info_sets = arrays.info_sets(sets, count)
    a_views = [a_sets[s] for s in range(sets)]
    b_views = [b_sets[s] for s in range(sets)] if b_sets is not None else [None] * sets
    i_views = [info_sets[s] for s in range(sets)]

    factored = routine == "potrs"
    if factored:  # potrs solves with a factor: make it once, the sets restore from it
        a0, _ = bs.potrf(a0, check=True)

    def restore():
        arrays.restore(a_sets, a0)
        if b_sets is not None:
            arrays.restore(b_sets, b0)

    row = {"routine": routine, "precision": precision, "n": n, "batch": count, "nrhs": nrhs if routine != "potrf" else 0,
           "sets": sets}

    # batchsolve from Python: in place (zero copies, info reused) and with new arrays (what a plain call does).
    if routine == "potrf":
        inplace = [lambda a=a, i=i: bs.potrf(a, overwrite_a=True, info=i) for a, i in zip(a_views, i_views)]
        fresh = [lambda a=a: bs.potrf(a) for a in a_views]
    elif routine == "potrs":
        inplace = [lambda a=a, b=b: bs.potrs(a, b, overwrite_b=True) for a, b in zip(a_views, b_views)]
        fresh = [lambda a=a, b=b: bs.potrs(a, b) for a, b in zip(a_views, b_views)]
    else:
        inplace = [lambda a=a, b=b, i=i: bs.posv(a, b, overwrite_a=True, overwrite_b=True, info=i)
                   for a, b, i in zip(a_views, b_views, i_views)]
        fresh = [lambda a=a, b=b: bs.posv(a, b) for a, b in zip(a_views, b_views)]

    # Warm-up: compile the kernels (NVRTC) and grow the workspace outside the timed region.
    restore()
    for call in inplace[:1] + fresh[:1]:
        call()
    arrays.synchronize()

    # Accuracy of the in-place run on set 0 (a sample of matrices, on the host, in double).
    restore()
    inplace[0]()
    arrays.synchronize()
    sample = slice(0, min(count, 256))
    a_host = arrays.to_host(a0[sample]).astype(np.complex128)
    if routine != "potrs":
        info_host = arrays.to_host(i_views[0])
        row["failed"] = int(np.count_nonzero(info_host))
    else:
        row["failed"] = 0
    if routine == "potrf":
        l = np.tril(arrays.to_host(a_views[0][sample]).astype(np.complex128))
        # a0 was the input: residual ||A - L L^H|| / (n ||A||), in units of eps
        r = np.linalg.norm(a_host - l @ l.conj().transpose(0, 2, 1), axis=(1, 2)) / (n * np.linalg.norm(a_host, axis=(1, 2)))
    else:
        a_full = a_host
        if routine == "potrs":
            l = np.tril(a_host)
            a_full = l @ l.conj().transpose(0, 2, 1)
        x = arrays.to_host(b_views[0][sample]).astype(np.complex128)
        b = arrays.to_host(b0[sample]).astype(np.complex128)
        r = np.linalg.norm(b - a_full @ x, axis=(1, 2)) / (n * np.linalg.norm(a_full, axis=(1, 2)) * np.linalg.norm(x, axis=(1, 2)))
    eps = float(np.finfo(np.float32 if precision in "sc" else np.float64).eps) / 2
    row["error"] = float(np.max(r) / eps)
    row["ok"] = bool(row["failed"] == 0 and row["error"] < 30)

    row["python_us"], row["python_issue_us"] = (1e6 * t for t in median_time(arrays, restore, inplace, repeat))
    row["python_new_us"], _ = (1e6 * t for t in median_time(arrays, restore, fresh, repeat))

    # The C++ call: the same library call on the same sets, looped in C++.
    row["cpp_us"], row["cpp_issue_us"] = cpp_time(arrays, restore, routine, a_views, b_views, i_views, nrhs, repeat)

    for name, make in peers.items():
        calls = make(routine, a_views, b_views)
        if calls is None:
            continue
        try:
            calls[0]()
            if getattr(calls, "finish", None) is not None:
                calls.finish()
            arrays.synchronize()
            row[f"{name}_us"], _ = (1e6 * t for t in median_time(arrays, restore, calls, repeat))
        except Exception as e:  # a peer that cannot run this case is reported, not fatal
            row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:200]
    # numpy: the faster of one thread and the thread pool is the peer (both kept in the row).
    numpy_times = [row[k] for k in ("numpy_1t_us", "numpy_mt_us") if k in row]
    if numpy_times:
        row["numpy_us"] = min(numpy_times)
    # Like for like: allocating against allocating, in place (preallocated outputs) against in place.
    alloc_peer = row.get("torch_ex_us") or row.get("numpy_us")
    if alloc_peer:
        row["speedup_alloc"] = alloc_peer / row["python_new_us"]
    if row.get("torch_ex_out_us"):
        row["speedup_inplace"] = row["torch_ex_out_us"] / row["python_us"]
        row["speedup_cpp"] = row["torch_ex_out_us"] / row["cpp_us"]
    row["kept"] = row["cpp_us"] / row["python_us"]  # the share of the C++ call's speed Python keeps
    if row.get("torch_us"):  # torch.linalg.cholesky: allocates and checks info (one synchronisation per call)
        row["speedup_alloc_vs_cholesky"] = row["torch_us"] / row["python_new_us"]
    row["overhead_us"] = row["python_us"] - row["cpp_us"]
    row["issue_overhead_us"] = row["python_issue_us"] - row["cpp_issue_us"]
    row["gflops_python"] = count * FLOPS[routine](n, nrhs) * (4 if precision in "cz" else 1) / (row["python_us"] * 1e3)
    del a_sets, b_sets, info_sets, a_views, b_views, i_views, a0, b0
    arrays.release()
    return row


def cpp_time(arrays, restore, routine, a_views, b_views, i_views, nrhs, repeat) -> tuple[float, float]:
    """The library call on the same views, looped in C++ (the extension's time_cholesky)."""
    from batchsolve._arrays import adapter_of

    fw = adapter_of(a_views[0])
    da = fw.describe(routine, "a", a_views[0])
    la = classify(da, allow_transposed=True)
    itemsize = {"s": 4, "d": 8, "c": 8, "z": 16}[da.precision]
    a_pitch = fw.describe(routine, "a", a_views[1]).address - da.address if len(a_views) > 1 else 0
    b_addr = ldb = stride_b = b_pitch = 0
    if routine != "potrf":
        db = fw.describe(routine, "b", b_views[0])
        lb = classify(db, allow_transposed=False)
        b_addr, ldb, stride_b = db.address, lb.ld, lb.stride
        b_pitch = fw.describe(routine, "b", b_views[1]).address - db.address if len(b_views) > 1 else 0
    info_addr = info_pitch = 0
    if routine != "potrs":
        info_addr = _info_address(i_views[0])
        info_pitch = _info_address(i_views[1]) - info_addr if len(i_views) > 1 else 0
    stream = fw.stream(a_views[0], da.device) if da.device >= 0 else 0
    count, n = da.shape[0], da.shape[-1]
    totals, issues = [], []
    for _ in range(repeat):
        restore()
        total, issue = _raw.time_cholesky(routine, da.precision, da.device, stream, True != la.transposed, n,
                                          nrhs if routine != "potrf" else 0, count, la.code, da.address, la.ld, la.stride,
                                          b_addr, ldb, stride_b, la.chunk, info_addr, "", len(a_views), a_pitch, b_pitch,
                                          info_pitch)
        totals.append(total / len(a_views))
        issues.append(issue / len(a_views))
    del itemsize
    return 1e6 * statistics.median(totals), 1e6 * statistics.median(issues)


def _info_address(x) -> int:
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if hasattr(x, "data_ptr"):
        return x.data_ptr()
    return x.data.ptr


# ---- peers -------------------------------------------------------------------------------------------


def torch_peers():
    import torch

    def cholesky_ex(routine, a_views, b_views):
        if routine == "potrf":
            return [lambda a=a: torch.linalg.cholesky_ex(a) for a in a_views]
        if routine == "potrs":
            return [lambda a=a, b=b: torch.cholesky_solve(b, a) for a, b in zip(a_views, b_views)]
        return [lambda a=a, b=b: torch.cholesky_solve(b, torch.linalg.cholesky_ex(a)[0]) for a, b in zip(a_views, b_views)]

    def cholesky(routine, a_views, b_views):  # raises on failure: reads info back every call
        if routine == "potrf":
            return [lambda a=a: torch.linalg.cholesky(a) for a in a_views]
        if routine == "posv":
            return [lambda a=a, b=b: torch.cholesky_solve(b, torch.linalg.cholesky(a)) for a, b in zip(a_views, b_views)]
        return None

    def cholesky_ex_out(routine, a_views, b_views):
        # The closest PyTorch has to an in-place call: outputs allocated once, written by out= every
        # call (PyTorch has no Cholesky that overwrites its input); compared with our in-place call.
        ls = [torch.empty_like(a) for a in a_views]
        infos = [torch.empty(a.shape[:-2], dtype=torch.int32, device=a.device) for a in a_views]
        if routine == "potrf":
            return [lambda a=a, l=l, i=i: torch.linalg.cholesky_ex(a, out=(l, i)) for a, l, i in zip(a_views, ls, infos)]
        xs = [torch.empty_like(b) for b in b_views]
        if routine == "potrs":
            return [lambda a=a, b=b, x=x: torch.cholesky_solve(b, a, out=x) for a, b, x in zip(a_views, b_views, xs)]
        return [lambda a=a, b=b, l=l, i=i, x=x: (torch.linalg.cholesky_ex(a, out=(l, i)), torch.cholesky_solve(b, l, out=x))
                for a, b, l, i, x in zip(a_views, b_views, ls, infos, xs)]

    return {"torch_ex": cholesky_ex, "torch_ex_out": cholesky_ex_out, "torch": cholesky}


def cupy_peers():
    import cupy

    def cholesky(routine, a_views, b_views):
        if routine != "potrf":
            return None  # CuPy has no batched Cholesky solve
        views = [cupy.from_dlpack(a) for a in a_views]  # the same memory
        return [lambda a=a: cupy.linalg.cholesky(a) for a in views]

    return {"cupy": cholesky}


def jax_peers():
    # JAX would take 75% of the GPU's memory at start-up and compute float64 input in float32 by default.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")  # freed arrays go back at once
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    if not any(d.platform == "gpu" for d in jax.devices()):
        return {}
    fn = jax.jit(jnp.linalg.cholesky)

    def cholesky(routine, a_views, b_views):
        if routine != "potrf":
            return None
        views = [jnp.from_dlpack(a) for a in a_views]
        if views and views[0].dtype != jnp.dtype(str(a_views[0].dtype).replace("torch.", "")):
            return None  # not the same data type: no fair comparison
        # Synchronised once per round like every other implementation: the results are kept and
        # waited for after the round's last call (median_time's finish), not one by one.
        results = []
        calls = CallList(lambda a=a: results.append(fn(a)) for a in views)

        def finish():
            for r in results:
                r.block_until_ready()
            results.clear()

        calls.finish = finish
        return calls

    return {"jax": cholesky}


class CallList(list):
    """A list of calls that may carry a `finish` hook (see median_time)."""


def backend_threads() -> int:
    """Threads the CPU backend uses (OpenMP: OMP_NUM_THREADS, else every core)."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return os.cpu_count() or 1


def numpy_peers():
    # One matrix after another in NumPy's own loop (one thread), and the batch split over a pool of as
    # many threads as the CPU backend runs (NumPy's linalg releases the GIL: 1.7x on 2 cores measured
    # for potrf d n = 8, batch 16384); the row's numpy_us is the faster (docs/benchmarking.md).
    from concurrent.futures import ThreadPoolExecutor

    threads = backend_threads()
    pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def one(routine, a, b):
        if routine == "potrf":
            return np.linalg.cholesky(a)
        return np.linalg.solve(a, b)  # LU: NumPy has no batched Cholesky solve

    def single(routine, a_views, b_views):
        if routine == "potrs":
            return None
        return [lambda a=a, b=b: one(routine, a, b) for a, b in zip(a_views, b_views)]

    def pooled(routine, a_views, b_views):
        if routine == "potrs" or pool is None:
            return None

        def call(a, b):
            parts_a = np.array_split(a, threads)
            parts_b = np.array_split(b, threads) if b is not None else [None] * threads
            return list(pool.map(lambda ab: one(routine, *ab), zip(parts_a, parts_b)))

        return [lambda a=a, b=b: call(a, b) for a, b in zip(a_views, b_views)]

    return {"numpy_1t": single, "numpy_mt": pooled}


# ---- output ------------------------------------------------------------------------------------------

COLUMNS = [("routine", "{}"), ("precision", "{}"), ("n", "{}"), ("batch", "{}"), ("cpp_us", "{:.1f}"),
           ("python_us", "{:.1f}"), ("overhead_us", "{:+.1f}"), ("issue_overhead_us", "{:+.1f}"),
           ("python_new_us", "{:.1f}"), ("torch_ex_us", "{:.1f}"), ("torch_ex_out_us", "{:.1f}"), ("torch_us", "{:.1f}"),
           ("cupy_us", "{:.1f}"), ("jax_us", "{:.1f}"), ("numpy_1t_us", "{:.1f}"), ("numpy_mt_us", "{:.1f}"), ("numpy_us", "{:.1f}"),
           ("speedup_alloc", "{:.2f}"), ("speedup_inplace", "{:.2f}"), ("speedup_cpp", "{:.2f}"),
           ("speedup_alloc_vs_cholesky", "{:.2f}"), ("kept", "{:.3f}"), ("error", "{:.1f}"), ("ok", "{}")]


def table(rows: list[dict]) -> str:
    columns = [(c, f) for c, f in COLUMNS if any(c in r for r in rows)]
    lines = ["| " + " | ".join(c for c, _ in columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(f.format(r[c]) if c in r else "" for c, f in columns) + " |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    out = []
    kept = [r["kept"] for r in rows if "kept" in r]
    if kept:
        worst = min(rows, key=lambda r: r.get("kept", 9))
        out.append(f"kept speed-up (C++ time / Python time): min {min(kept):.3f} at {worst['routine']} {worst['precision']} "
                   f"n={worst['n']} batch={worst['batch']}, median {statistics.median(kept):.3f} "
                   f"({sum(k >= 0.9 for k in kept)} of {len(kept)} cases >= 0.90)")
    at_16384 = [r for r in rows if r["batch"] == 16384]
    if at_16384:
        worst = max(at_16384, key=lambda r: r["overhead_us"])
        worst_issue = max(at_16384, key=lambda r: r["issue_overhead_us"])
        out.append(f"overhead at batch 16384: max {worst['overhead_us']:+.1f} us per call ({worst['routine']} "
                   f"{worst['precision']} n={worst['n']}), host issue max {worst_issue['issue_overhead_us']:+.1f} us "
                   f"({sum(r['overhead_us'] <= 10 for r in at_16384)} of {len(at_16384)} cases <= 10 us)")
    speed = [r for r in rows if "speedup_alloc" in r]
    if speed:
        out.append("speed-up over the peer, allocating vs allocating" +
                   (" / in place vs out= (PyTorch)" if any("speedup_inplace" in r for r in speed) else "") + ": " + ", ".join(
            f"{r['routine']}{r['precision']} n={r['n']} b={r['batch']}: {r['speedup_alloc']:.2f}"
            + (f"/{r['speedup_inplace']:.2f}" if "speedup_inplace" in r else "") for r in speed[:12])
            + (" ..." if len(speed) > 12 else ""))
    bad = [r for r in rows if not r["ok"]]
    out.append(f"accuracy: {len(rows) - len(bad)} of {len(rows)} cases ok" +
               ("" if not bad else " (FAILED: " + ", ".join(f"{r['routine']}{r['precision']} n={r['n']}" for r in bad) + ")"))
    return "\n".join(out)


def plot(rows: list[dict], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["routine"], r["batch"]) for r in rows if "speedup_alloc" in r})
    if not groups:
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
    for ax, (routine, batch) in zip(axes[0], groups):
        for precision, color in zip("sdcz", ("C0", "C1", "C2", "C3")):
            sel = sorted((r for r in rows if r["routine"] == routine and r["batch"] == batch and r["precision"] == precision
                          and "speedup_alloc" in r), key=lambda r: r["n"])
            if not sel:
                continue
            ns = [r["n"] for r in sel]
            ax.plot(ns, [r["speedup_alloc"] for r in sel], "o-", color=color, label=f"{precision} allocating")
            inplace = [r for r in sel if "speedup_inplace" in r]
            if inplace:
                ax.plot([r["n"] for r in inplace], [r["speedup_inplace"] for r in inplace], "x--", color=color,
                        label=f"{precision} in place / out=")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n")
        ax.set_ylabel("speed-up over the peer")
        ax.set_title(f"{routine}, batch {batch}")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# The Python layer's targets: (metric, op, value, batch the target is judged at or None for every batch,
# what the metric is). A target is met by a case when the case is accurate (ok) and its value holds.
TARGETS = (
    ("overhead_us", "<=", 10.0, 16384, "Python in-place call - the same call looped in C++, us per call"),
    ("kept", ">=", 0.90, None, "C++ time / Python time: the share of the C++ call's speed-up over the peer that Python keeps"),
)


def targets(rows: list[dict]) -> list[dict]:
    """One entry per target and case it applies to: the target, the case, the measured value, met."""
    out = []
    for metric, op, value, batch, basis in TARGETS:
        for r in rows:
            if batch is not None and r["batch"] != batch or metric not in r:
                continue
            measured = r[metric]
            holds = measured <= value if op == "<=" else measured >= value
            out.append({"target": {"metric": metric, "op": op, "value": value, "batch": batch, "basis": basis},
                        "routine": r["routine"], "precision": r["precision"], "n": r["n"], "batch": r["batch"],
                        "measured": measured, "met": bool(r["ok"] and holds), "row_ok": r["ok"]})
    return out


def commit() -> str:
    if os.environ.get("BATCHSOLVE_COMMIT"):
        return os.environ["BATCHSOLVE_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def progress(done: int, total: int, started: float, label: str) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {time.perf_counter() - started:6.1f} s {label:40.40s}")
    sys.stderr.flush()
    if done == total:
        sys.stderr.write("\n")


def main(argv=None) -> int:
    args = arguments(argv)
    device = args.device or ("cuda" if bs.cuda_available() else "cpu")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    peers: dict = {}
    if device == "cuda":
        try:
            arrays = TorchArrays(seed)
        except ImportError:
            print("batchsolve.bench: --device cuda needs PyTorch (the arrays are torch tensors)", file=sys.stderr)
            return 2
        wanted = parse_list(args.peers)
        for name, factory in (("torch", torch_peers), ("cupy", cupy_peers), ("jax", jax_peers)):
            if name in wanted:
                try:
                    peers.update(factory())
                except ImportError:
                    print(f"batchsolve.bench: {name} not installed: no {name} column", file=sys.stderr)
        device_label = bs.device_name(0)
    else:
        arrays = NumpyArrays(seed)
        peers = numpy_peers()
        device_label = bs.device_name(-1)
    cases = [(r, p, n, b) for r in parse_list(args.routine) for p in parse_list(args.precision)
             for b in parse_list(args.batch, int) for n in parse_list(args.n, int)]
    for r, p, _, _ in cases:
        if r not in FLOPS or p not in "sdcz" or len(p) != 1:
            print(f"batchsolve.bench: unknown routine {r!r} or precision {p!r}", file=sys.stderr)
            return 2
    versions = {"numpy": np.__version__, "batchsolve": bs.__version__, "python": sys.version.split()[0]}
    for name in ("torch", "cupy", "jax"):
        if name in sys.modules:
            versions[name] = getattr(sys.modules[name], "__version__", "?")
    print(f"batchsolve.bench on {device_label} ({device}), seed {seed}, commit {commit() or '?'}, "
          + ", ".join(f"{k} {v}" for k, v in versions.items()))
    rows, skipped, failed = [], [], []
    started = time.perf_counter()
    for i, (routine, precision, n, count) in enumerate(cases):
        if args.time_limit and time.perf_counter() - started > args.time_limit:
            skipped = cases[i:]
            break
        progress(i, len(cases), started, f"{routine} {precision} n={n} batch={count}")
        try:
            rows.append(run_case(arrays, routine, precision, n, count, args.nrhs, args.repeat, args.max_sets, peers))
        except Exception as e:  # out of memory, a failing peer...: reported, and the next case runs
            failed.append({"routine": routine, "precision": precision, "n": n, "batch": count,
                           "error": f"{type(e).__name__}: {str(e)[:300]}"})
            print(f"\nbatchsolve.bench: {routine} {precision} n={n} batch={count}: {failed[-1]['error']}", file=sys.stderr)
            arrays.release()
        write_outputs(args, rows, skipped, failed, device_label, versions, argv)  # after every case: a cut run keeps them
    progress(len(rows), len(rows) + len(skipped), started, "")
    text = table(rows)
    print(text)
    if skipped:
        print(f"time limit: {len(skipped)} cases not run: " + ", ".join(f"{r}{p} n={n} b={b}" for r, p, n, b in skipped))
    for f in failed:
        print(f"FAILED to run: {f['routine']} {f['precision']} n={f['n']} batch={f['batch']}: {f['error']}")
    report = write_outputs(args, rows, skipped, failed, device_label, versions, argv, final=True)
    print(report)
    return 0 if all(r["ok"] for r in rows) and not failed else 1


def write_outputs(args, rows, skipped, failed, device_label, versions, argv, final: bool = False) -> str:
    """The JSON, the Markdown table and (at the end) the plot, with the machine, commit and date."""
    report = summary(rows) if rows else "no case ran"
    if failed:
        report += f"\n{len(failed)} cases could not run (see failed in the JSON)"
    meta = {"device": device_label, "commit": commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "versions": versions, "argv": sys.argv[1:] if argv is None else argv, "repeat": args.repeat}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows, "not_run": [list(c) for c in skipped], "failed": failed,
                       "summary": report}, f, indent=1)
    if args.table:
        with open(args.table, "w") as f:
            f.write(f"# batchsolve.bench on {device_label}, commit {meta['commit']}, {meta['date']}\n\n{table(rows) if rows else ''}\n\n{report}\n")
    if args.targets_out:
        entries = targets(rows)
        with open(args.targets_out, "w") as f:
            json.dump({"bench_json": args.json, "commit": meta["commit"], "date": meta["date"], "device": device_label,
                       "met": sum(e["met"] for e in entries), "total": len(entries), "targets": entries}, f, indent=1)
    if final and args.plot and rows:
        try:
            plot(rows, args.plot, f"batchsolve from Python over the peer, like for like, {device_label}, {meta['commit']}")
        except ImportError:
            print("batchsolve.bench: matplotlib not installed: no plot", file=sys.stderr)
    return report


if __name__ == "__main__":
    sys.exit(main())
