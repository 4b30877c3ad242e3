#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_batch_reader (data/fuzz/corpus/batch_reader/): small valid batch
files in every precision and crafted ones, each exercising one check of the reader. The files are
committed (the fuzzer starts from them); rerun this script to remake them (h5py and numpy)."""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "batch_reader")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(22)
dtypes = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def identity(f, precision="d", uplo="lower", fixed_strings=False):
    for key, value in (("format", "batchsolve-batch"), ("precision", precision), ("uplo", uplo),
                       ("layout", "column_major")):
        f.attrs[key] = np.bytes_(value) if fixed_strings else value
    f.attrs["format_version"] = np.int32(1)


def spd_batch(n, count, dtype):
    g = rng.standard_normal((count, n, n))
    if np.issubdtype(dtype, np.complexfloating):
        g = g + 1j * rng.standard_normal((count, n, n))
    a = g @ np.conj(np.transpose(g, (0, 2, 1))) + n * np.eye(n)
    return a.astype(dtype)


def valid(name, precision, n=3, count=2, nrhs=1, extras=True, **kw):
    dtype = dtypes[precision]
    with h5py.File(os.path.join(out, name), "w") as f:
        identity(f, precision, **kw)
        f["A"] = spd_batch(n, count, dtype)
        x = rng.standard_normal((count, nrhs, n)).astype(dtype)
        f["B"] = x  # not A x: the reader does not care, the solver just solves
        if extras:
            f["X_true"] = x
            f["expected_info"] = np.zeros(count, np.int32)
            f.attrs["generator"] = "make_corpus.py"
            f.attrs["generator_cond"] = 10.0
            f.attrs["generator_seed"] = np.uint64(22)


for p in "sdcz":
    valid(f"valid_{p}.h5", p)
valid("valid_upper_fixed_strings.h5", "d", n=4, count=3, nrhs=2, extras=False, uplo="upper", fixed_strings=True)
valid("valid_empty_n0.h5", "d", n=0, count=4, nrhs=1, extras=False)

# Issue 22, defect 1: a shape whose element count wraps 64 bits, in a 6 KB file.
with h5py.File(os.path.join(out, "crafted_wrapping_shape.h5"), "w") as f:
    identity(f)
    f.create_dataset("A", shape=(313248009, 999942535, 999942535), dtype="f8", chunks=(1, 1, 1))
    f.create_dataset("B", shape=(313248009, 1, 999942535), dtype="f8", chunks=(1, 1, 1))
# ... and one whose count wraps to exactly 0 (once "'a.data': non-null").
with h5py.File(os.path.join(out, "crafted_wrap_to_zero.h5"), "w") as f:
    identity(f)
    f.create_dataset("A", shape=(1 << 30, 1 << 30, 1 << 30), dtype="f8", chunks=(1, 1, 1))
    f.create_dataset("B", shape=(1 << 30, 1, 1 << 30), dtype="f8", chunks=(1, 1, 1))
# Declared, contiguous, never written: the file stores nothing of it.
with h5py.File(os.path.join(out, "crafted_unwritten.h5"), "w") as f:
    identity(f)
    f.create_dataset("A", shape=(100, 30, 30), dtype="f8")
    f["B"] = np.zeros((100, 1, 30))
# Data in another file.
with h5py.File(os.path.join(out, "crafted_external_link.h5"), "w") as f:
    identity(f)
    f["A"] = h5py.ExternalLink("other.h5", "/A")
    f["B"] = np.zeros((1, 1, 1))
# Shapes that disagree, a wrong dtype, a newer format version.
with h5py.File(os.path.join(out, "crafted_shapes_disagree.h5"), "w") as f:
    identity(f)
    f["A"] = spd_batch(3, 2, np.float64)
    f["B"] = np.zeros((2, 1, 4))
with h5py.File(os.path.join(out, "crafted_wrong_dtype.h5"), "w") as f:
    identity(f, "s")
    f["A"] = spd_batch(3, 2, np.float64)
    f["B"] = np.zeros((2, 1, 3))
with h5py.File(os.path.join(out, "crafted_compressed.h5"), "w") as f:
    identity(f)
    f.create_dataset("A", data=spd_batch(8, 16, np.float64), chunks=(4, 8, 8), compression="gzip")
    f.create_dataset("B", data=np.ones((16, 1, 8)), chunks=(16, 1, 8), compression="gzip", shuffle=True)
# The first valid file cut in half.
with open(os.path.join(out, "valid_d.h5"), "rb") as src:
    data = src.read()
with open(os.path.join(out, "crafted_truncated.h5"), "wb") as dst:
    dst.write(data[: len(data) // 2])
print(f"wrote {len(os.listdir(out))} files to {out}")

# The typed layer's target (fuzz_h5_file) starts from files like the applications write: datasets of
# several types and ranks, strings, attributes on the root, a group and a dataset.
typed = os.path.join(os.path.dirname(out), "h5_file")
os.makedirs(typed, exist_ok=True)
with h5py.File(os.path.join(typed, "typed.h5"), "w") as f:
    f.attrs["title"] = "fuzz seed"
    f.attrs["count"] = np.int64(7)
    f.attrs["scale"] = 0.5
    f["data"] = rng.standard_normal((4, 5))
    f["data"].attrs["axes"] = np.array([1.0, 2.0, 3.0])
    f["group/values"] = np.arange(12, dtype=np.uint16).reshape(3, 4)
    f["group"].attrs["title"] = np.bytes_("fixed length")
    f["names"] = np.array(["alpha", "beta", ""], dtype=h5py.string_dtype())
    f["A"] = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
    f["B"] = np.int32(-3)
with h5py.File(os.path.join(typed, "compressed.h5"), "w") as f:
    f.create_dataset("data", data=np.arange(4096, dtype=np.float32).reshape(64, 64), chunks=(16, 64),
                     compression="gzip")
    f.create_dataset("names", data=np.array([b"ab", b"cdef"], dtype="S4"))
print(f"wrote {len(os.listdir(typed))} files to {typed}")
