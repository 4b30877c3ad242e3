"""The Python package on the CPU backend with NumPy arrays: accuracy against numpy.linalg scaled by
n and eps, per-matrix info, argument errors, memory orders and strides, dtypes, zero-size batches,
zero-copy, layout conversions and the mixed-precision indefinite solver."""

from __future__ import annotations

import numpy as np
import pytest

import batchsolve as bs
from conftest import DTYPES, backward_error, factor_residual, rhs_batch, spd_batch, unit_roundoff

TOLERANCE = 30  # on errors already divided by n and the unit roundoff


def address(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def stored(a: np.ndarray, order: str) -> np.ndarray:
    """The same batch stored another way: 'C' row-major matrices, 'F' column-major, 'ld' column-major
    inside a larger leading dimension, 'Cld' row-major inside longer rows, 'batchstride' every
    other matrix of a larger batch, 'interleaved' by the library's conversion."""
    count, n, _ = a.shape
    if order == "C":
        return np.ascontiguousarray(a)
    if order == "F":
        return np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)
    if order == "ld":
        big = np.full((count, n + 3, n + 2), np.nan, dtype=a.dtype)  # Fortran per matrix, ld = n + 3
        big = np.ascontiguousarray(big.transpose(0, 2, 1)).transpose(0, 2, 1)
        view = big[:, :n, :n]
        view[...] = a
        return view
    if order == "Cld":
        big = np.full((count, n, n + 5), np.nan, dtype=a.dtype)
        view = big[:, :, :n]
        view[...] = a
        return view
    if order == "batchstride":
        big = np.full((2 * count, n, n), np.nan, dtype=a.dtype)
        view = big[::2]
        view[...] = a
        return view
    if order == "interleaved":
        return bs.to_interleaved(a)
    raise ValueError(order)


ORDERS = ["C", "F", "ld", "Cld", "batchstride", "interleaved"]


# ---- accuracy ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("lower", [True, False])
def test_potrf_accuracy_every_order(seed, dtype, order, lower):
    rng = np.random.default_rng(seed)
    n, count = 13, 17
    a = spd_batch(rng, count, n, dtype)
    a_in = stored(a, order)
    # The triangle that must not be read is poisoned: a factor that touched it would be NaN.
    poisoned = a_in.copy() if order != "interleaved" else bs.to_interleaved(a)
    i, j = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    poisoned[:, i, j] = np.nan
    info = np.full(count, -7, dtype=np.int32)
    factor, info_out = bs.potrf(poisoned, lower=lower, info=info)
    assert info_out is info and (info == 0).all(), info
    tri = np.tril if lower else np.triu
    assert np.isfinite(tri(factor)).all()
    u = unit_roundoff(dtype)
    assert factor_residual(a, tri(factor), lower) / u < TOLERANCE
    # Against numpy.linalg.cholesky (lower; upper is its conjugate transpose): a forward error, so
    # it is scaled by the condition number too.
    reference = np.linalg.cholesky(a.astype(np.complex128))
    mine = tri(factor).astype(np.complex128)
    if not lower:
        mine = mine.conj().transpose(0, 2, 1)
    rel = np.linalg.norm(mine - reference, axis=(1, 2)) / np.linalg.norm(reference, axis=(1, 2))
    assert rel.max() / (n * u * 1e3) < TOLERANCE
    # The other triangle is left as it was (LAPACK's convention).
    other = np.triu if lower else np.tril
    k = 1 if lower else -1
    assert np.isnan(other(np.asarray(factor), k)[:, i, j]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("nrhs", [1, 4])
def test_posv_and_potrs_backward_error(seed, dtype, order, nrhs):
    rng = np.random.default_rng(seed)
    n, count = 11, 9
    a = spd_batch(rng, count, n, dtype, cond=1e4)
    b = rhs_batch(rng, count, n, nrhs, dtype)
    u = unit_roundoff(dtype)
    for lower in (True, False):
        a_in = stored(a, order)
        x, info = bs.posv(a_in, b, lower=lower)
        assert (info == 0).all()
        assert backward_error(a, x, b) / u < TOLERANCE
        factor, info = bs.potrf(a_in, lower=lower)
        x2 = bs.potrs(factor, b, lower=lower)
        assert backward_error(a, x2, b) / u < TOLERANCE
        # The same solution as numpy.linalg.solve, to within the condition number.
        reference = np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128))
        rel = np.linalg.norm(x2 - reference, axis=(1, 2)) / np.linalg.norm(reference, axis=(1, 2))
        assert rel.max() / (n * u * 1e4) < TOLERANCE
    # Inputs untouched without overwrite_*.
    np.testing.assert_array_equal(a_in if order != "interleaved" else bs.from_interleaved(a_in), a)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_right_hand_side_shapes_and_orders(seed, dtype):
    rng = np.random.default_rng(seed)
    n, count = 7, 5
    a = spd_batch(rng, count, n, dtype)
    u = unit_roundoff(dtype)
    vector = rhs_batch(rng, count, n, 1, dtype)[..., 0]
    x, info = bs.posv(a, vector)
    assert x.shape == (count, n) and backward_error(a, x[..., None], vector[..., None]) / u < TOLERANCE
    for order in ("C", "F"):
        b = rhs_batch(rng, count, n, 3, dtype)
        b_in = np.ascontiguousarray(b) if order == "C" else np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)
        x, info = bs.posv(a, b_in)
        assert backward_error(a, x, b) / u < TOLERANCE


# ---- per-matrix info --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("routine", ["potrf", "posv"])
def test_info_for_bad_members(seed, dtype, routine):
    rng = np.random.default_rng(seed)
    n, count = 10, 12
    a = spd_batch(rng, count, n, dtype)
    b = rhs_batch(rng, count, n, 2, dtype)
    bad = a.copy()
    bad[3, 4, 4] = -1.0          # leading minor 5 not positive definite
    bad[7, 0, 0] = np.nan        # a NaN pivot at column 1
    bad[9, 9, 9] = -5.0          # the last pivot
    expected = np.zeros(count, dtype=np.int32)
    expected[[3, 7, 9]] = [5, 1, 10]
    if routine == "potrf":
        factor, info = bs.potrf(bad)
        good = expected == 0
        assert factor_residual(a[good], np.tril(factor[good]), True) / unit_roundoff(dtype) < TOLERANCE
    else:
        x, info = bs.posv(bad, b)
        good = expected == 0
        assert backward_error(a[good], x[good], b[good]) / unit_roundoff(dtype) < TOLERANCE
    np.testing.assert_array_equal(info, expected)
    with pytest.raises(bs.LinAlgError) as raised:
        getattr(bs, routine)(bad, check=True) if routine == "potrf" else bs.posv(bad, b, check=True)
    assert list(raised.value.failed) == [3, 7, 9]
    assert "matrix 3 (leading minor 5)" in str(raised.value) and "3 of 12" in str(raised.value)
    np.testing.assert_array_equal(raised.value.info, expected)


# ---- zero copy and in place -------------------------------------------------------------------------


def test_in_place_and_out_are_zero_copy(seed):
    rng = np.random.default_rng(seed)
    n, count = 9, 6
    a = spd_batch(rng, count, n, np.float64)
    b = rhs_batch(rng, count, n, 2, np.float64)
    work = a.copy()
    factor, info = bs.potrf(work, overwrite_a=True)
    assert factor is work and address(factor) == address(work)
    out = np.full_like(a, np.nan)
    factor2, _ = bs.potrf(a, out=out)
    assert factor2 is out
    np.testing.assert_array_equal(np.tril(out), np.tril(work))
    b_work = np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)  # column-major: solved where it is
    x = bs.potrs(factor, b_work, overwrite_b=True)
    assert x is b_work and address(x) == address(b_work)
    assert backward_error(a, x, b) / unit_roundoff(np.float64) < TOLERANCE
    x_out = np.full_like(b, np.nan)
    x2, _ = bs.posv(a, b, out=x_out)
    assert x2 is x_out and backward_error(a, x2, b) / unit_roundoff(np.float64) < TOLERANCE
    # C-order B with several right-hand sides is solved in a column-major temporary and copied back.
    b_c = b.copy()
    x3 = bs.potrs(factor, b_c, overwrite_b=True)
    assert x3 is b_c and backward_error(a, x3, b) / unit_roundoff(np.float64) < TOLERANCE


def test_zero_size_batches():
    for shape in [(0, 4, 4), (3, 0, 0), (0, 0, 0)]:
        a = np.zeros(shape)
        factor, info = bs.potrf(a)
        assert factor.shape == shape and info.shape == (shape[0],) and (info == 0).all()
        b = np.zeros(shape[:2] + (2,))
        x, info = bs.posv(a, b)
        assert x.shape == b.shape and info.shape == (shape[0],)
        assert bs.potrs(a, b).shape == b.shape
    a = np.eye(3)[None].repeat(2, 0)
    x, info = bs.posv(a, np.zeros((2, 3, 0)))  # nrhs = 0
    assert x.shape == (2, 3, 0) and (info == 0).all()


# ---- argument errors --------------------------------------------------------------------------------


def expect_argument_error(argument: str, call, *args, **kwargs):
    with pytest.raises(bs.ArgumentError) as raised:
        call(*args, **kwargs)
    assert raised.value.argument == argument, str(raised.value)
    assert argument in str(raised.value)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, bs.Error)
    return raised.value


def test_argument_errors_name_the_argument():
    a = np.eye(4)[None].repeat(3, 0)
    b = np.ones((3, 4, 2))
    expect_argument_error("a.dtype", bs.potrf, a.astype(np.int32))
    expect_argument_error("a.dtype", bs.potrf, a.astype(np.float16))
    expect_argument_error("a.shape", bs.potrf, np.ones(4))
    expect_argument_error("a.shape", bs.potrf, np.ones((4, 5)))
    expect_argument_error("a.shape", bs.potrf, np.ones((3, 4, 5)))
    expect_argument_error("b.shape", bs.posv, a, np.ones((2, 4, 2)))
    expect_argument_error("b.shape", bs.posv, a, np.ones((3, 5, 2)))
    expect_argument_error("b.dtype", bs.posv, a, b.astype(np.float32))
    expect_argument_error("info.dtype", bs.potrf, a, info=np.zeros(3, dtype=np.int64))
    expect_argument_error("info", bs.potrf, a, info=np.zeros(4, dtype=np.int32))
    expect_argument_error("out.shape", bs.potrf, a, out=np.zeros((3, 4, 3)))
    expect_argument_error("a", bs.potrf, "not an array")
    read_only = a.copy()
    read_only.flags.writeable = False
    expect_argument_error("a", bs.potrf, read_only, overwrite_a=True)
    bs.potrf(read_only)  # a copy is fine
    strided = np.ones((3, 8, 8))[:, ::2, ::2]  # no unit stride in either direction
    expect_argument_error("a", bs.potrf, strided, overwrite_a=True)
    assert (bs.potrf(strided * np.eye(4))[1] == 0).all()  # copied: fine
    reversed_ = (a * 2)[::-1]  # negative batch stride: copied unless in place
    assert (bs.potrf(reversed_)[1] == 0).all()
    # The library's own checks keep its message and argument (a kernel configuration's field).
    with pytest.raises(bs.ArgumentError) as raised:
        bs.canonical_config({"nb": "eight"})
    assert "nb" in raised.value.argument
    expect_argument_error("routine", bs.prepare, "getrf", a)
    expect_argument_error("stream", bs.potrf, a, stream="default")
    expect_argument_error("chunk", bs.to_interleaved, a, chunk=2)
    with pytest.raises(bs.NotCompiledError if not bs.cuda_compiled() else bs.Error):
        bs.reserve_workspace(1024, device=0) if not bs.cuda_compiled() else bs.device_name(10_000)


def test_library_argument_error_passes_through():
    """Errors the library itself raises before any work arrive with its routine, argument and text."""
    a = np.eye(4)[None].repeat(3, 0)
    overlapping = np.lib.stride_tricks.as_strided(a, shape=(3, 4, 4), strides=(0, 8, 32))  # batch stride 0
    with pytest.raises(bs.ArgumentError) as raised:
        bs.potrf(overlapping, overwrite_a=True)
    assert raised.value.routine == "potrf_batched" and raised.value.argument == "a.stride"
    assert "stride >= ld * cols" in str(raised.value)


# ---- layouts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_layout_round_trips(seed, dtype):
    rng = np.random.default_rng(seed)
    a = spd_batch(rng, 12, 5, dtype)
    inter = bs.to_interleaved(a)
    assert inter.strides == tuple(s * a.itemsize for s in (1, 12, 60))
    np.testing.assert_array_equal(inter, a)
    np.testing.assert_array_equal(bs.from_interleaved(inter), a)
    np.testing.assert_array_equal(bs.from_interleaved(inter, order="C"), a)
    chunked = bs.to_interleaved(a, chunk=4)
    assert chunked.shape == (3, 4, 5, 5)
    np.testing.assert_array_equal(chunked.reshape(12, 5, 5), a)
    np.testing.assert_array_equal(bs.from_interleaved(chunked), a)
    # A chunked batch solves with chunked right-hand sides.
    b = rhs_batch(rng, 12, 5, 2, dtype)
    x, info = bs.posv(chunked, b.reshape(3, 4, 5, 2))
    assert (info == 0).all() and backward_error(a, x.reshape(12, 5, 2), b) / unit_roundoff(dtype) < TOLERANCE


def test_hooks_on_the_cpu():
    a = np.eye(8)[None].repeat(4, 0)
    report = bs.prepare("potrf", a)
    assert report["supported"] is False and report["note"]
    assert bs.workspace_bytes("posv", a) >= 0
    config = bs.canonical_config({"nb": 4})
    assert config["nb"] == 4 and "looking" in config
    assert "CPU" in bs.device_name(-1)


# ---- other frameworks on the host ---------------------------------------------------------------------


def test_dlpack_objects_are_wrapped_and_given_back(seed):
    """Any object with __dlpack__ (here a minimal one around a NumPy array) is read zero-copy."""

    class Foreign:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    rng = np.random.default_rng(seed)
    a = spd_batch(rng, 4, 6, np.float64)
    b = rhs_batch(rng, 4, 6, 1, np.float64)
    x, info = bs.posv(Foreign(a), Foreign(b))
    assert (np.asarray(info) == 0).all() and backward_error(a, np.asarray(x), b) / unit_roundoff(np.float64) < TOLERANCE


def test_torch_cpu_tensors(seed):
    torch = pytest.importorskip("torch", reason="skipped: PyTorch not installed")
    rng = np.random.default_rng(seed)
    a = spd_batch(rng, 5, 6, np.float64)
    b = rhs_batch(rng, 5, 6, 2, np.float64)
    x, info = bs.posv(torch.from_numpy(a), torch.from_numpy(b))
    assert isinstance(x, torch.Tensor) and isinstance(info, torch.Tensor) and info.dtype == torch.int32
    assert backward_error(a, x.numpy(), b) / unit_roundoff(np.float64) < TOLERANCE


def test_jax_arrays(seed):
    jnp = pytest.importorskip("jax.numpy", reason="skipped: JAX not installed")
    rng = np.random.default_rng(seed)
    a = spd_batch(rng, 5, 6, np.float32)
    b = rhs_batch(rng, 5, 6, 2, np.float32)
    x, info = bs.posv(jnp.asarray(a), jnp.asarray(b))
    assert type(x).__module__.startswith("jax") and (np.asarray(info) == 0).all()
    assert backward_error(a, np.asarray(x), b) / unit_roundoff(np.float32) < TOLERANCE
    with pytest.raises(bs.ArgumentError):
        bs.potrf(jnp.asarray(a), overwrite_a=True)


# ---- mixed-precision symmetric indefinite -----------------------------------------------------------


@pytest.mark.parametrize("dtype,hermitian", [(np.float64, False), (np.complex128, True), (np.complex128, False)])
@pytest.mark.parametrize("order,lower", [("F", True), ("C", True), ("F", False)])
def test_sysv_mixed(seed, dtype, hermitian, order, lower):
    rng = np.random.default_rng(seed)
    n = 120
    g = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if dtype == np.complex128 else 0)
    a = g + (g.conj().T if hermitian else g.T)  # indefinite, symmetric or Hermitian
    a += np.diag(np.where(np.arange(n) % 2 == 0, 1.0, -1.0)) * 2 * np.sqrt(n)  # keep it away from singular
    a = a.astype(dtype)
    a_in = a.copy(order=order)
    b = rng.standard_normal((n, 2)).astype(dtype)
    # The triangle not named is poisoned: it must not be read.
    a_in[np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)] = np.nan
    x, report = bs.sysv_mixed(a_in, b, hermitian=hermitian, lower=lower)
    assert report["path"] != "none", report["description"]
    r = b - a @ x
    eps = np.finfo(np.float64).eps
    assert np.abs(r).max() / (np.abs(a).max() * np.abs(x).max() * n * eps) < TOLERANCE, report
    x1, _ = bs.sysv_mixed(a_in, b[:, 0], hermitian=hermitian, lower=lower)
    assert x1.shape == (n,)
    with pytest.raises(bs.ArgumentError):
        bs.sysv_mixed(a_in.real.astype(np.float32), b.real.astype(np.float32))


# ---- one large matrix, variable-size batches ----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("lower", [True, False])
def test_one_large_matrix(seed, dtype, order, lower):
    """A 2-D array is one matrix: potrf/potrs/posv of cholesky_large.hpp."""
    rng = np.random.default_rng(seed)
    n = 150
    a = spd_batch(rng, 1, n, dtype)[0]
    b = rhs_batch(rng, 1, n, 3, dtype)[0]
    a_in = a.copy(order=order)
    a_in[np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)] = np.nan  # must not be read
    u = unit_roundoff(dtype)
    tri = np.tril if lower else np.triu
    factor, info = bs.potrf(a_in, lower=lower)
    assert info.shape == (1,) and info[0] == 0
    assert factor_residual(a[None], tri(factor)[None], lower) / u < TOLERANCE
    x = bs.potrs(factor, b, lower=lower)
    assert backward_error(a[None], x[None], b[None]) / u < TOLERANCE
    x, info = bs.posv(a_in, b[:, 0], lower=lower)
    assert x.shape == (n,) and backward_error(a[None], x[None, :, None], b[None, :, :1]) / u < TOLERANCE
    bad = a.copy(order=order)
    bad[40, 40] = -1e3
    assert bs.potrf(bad, lower=lower)[1][0] == 41
    with pytest.raises(bs.LinAlgError):
        bs.posv(bad, b, check=True)


def test_posv_mixed(seed):
    rng = np.random.default_rng(seed)
    n = 200
    a = spd_batch(rng, 1, n, np.float64, cond=1e4)[0]
    b = rhs_batch(rng, 1, n, 2, np.float64)[0]
    for a_in in (np.asfortranarray(a), np.ascontiguousarray(a)):
        x, report = bs.posv_mixed(a_in, b)
        assert report["path"] in ("single_refined", "double_direct"), report["description"]
        assert backward_error(a[None], x[None], b[None]) / unit_roundoff(np.float64) < TOLERANCE
    x1, _ = bs.posv_mixed(a, b[:, 1])
    assert x1.shape == (n,)
    expect_argument_error("dtype", bs.posv_mixed, a.astype(np.float32), b.astype(np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_variable_size_batch_from_a_list(seed, dtype):
    """A list of square matrices of different orders: one potrf_vbatched call, info per matrix."""
    rng = np.random.default_rng(seed)
    orders = [1, 7, 33, 0, 64, 2, 19]
    mats = [spd_batch(rng, 1, n, dtype)[0] for n in orders]
    u = unit_roundoff(dtype)
    for lower in (True, False):
        tri = np.tril if lower else np.triu
        for order in ("F", "C"):
            inputs = [m.copy(order=order) for m in mats]
            factors, info = bs.potrf(inputs, lower=lower)
            assert info.shape == (len(orders),) and (info == 0).all(), info
            for m, f in zip(mats, factors):
                if m.shape[0]:
                    assert factor_residual(m[None], tri(f)[None], lower) / u < TOLERANCE
    bad = [m.copy() for m in mats]
    bad[4][10, 10] = -100
    work = [np.asfortranarray(m) for m in bad]
    factors, info = bs.potrf(work, overwrite_a=True)
    assert all(f is w for f, w in zip(factors, work))
    np.testing.assert_array_equal(info, [0, 0, 0, 0, 11, 0, 0])
    with pytest.raises(bs.LinAlgError):
        bs.potrf(bad, check=True)
    # Mixed memory orders: copied to one order, or refused in place.
    mixed = [np.asfortranarray(mats[1]), np.ascontiguousarray(mats[2])]
    assert (bs.potrf(mixed)[1] == 0).all()
    expect_argument_error("a[1]", bs.potrf, mixed, overwrite_a=True)
    expect_argument_error("a[1].shape", bs.potrf, [mats[1], np.ones((3, 4), dtype=dtype)])
    expect_argument_error("a", bs.potrf, [])


def _op(x: np.ndarray, op: str) -> np.ndarray:
    return x if op == "n" else x.T if op == "t" else x.conj().T


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["F", "C"])
def test_gemm_on_lists_of_different_sizes(seed, dtype, order):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4, 5), (1, 1, 1), (10, 2, 7), (0, 3, 2), (6, 6, 0), (17, 9, 12)]  # (m, n, k)
    u = unit_roundoff(dtype)
    for ta, tb in [("n", "n"), ("t", "n"), ("n", "c"), ("c", "t")]:
        a = [rhs_batch(rng, 1, *((m, k) if ta == "n" else (k, m)), dtype)[0].copy(order=order) for m, n, k in shapes]
        b = [rhs_batch(rng, 1, *((k, n) if tb == "n" else (n, k)), dtype)[0].copy(order=order) for m, n, k in shapes]
        c = [rhs_batch(rng, 1, m, n, dtype)[0].copy(order=order) for m, n, k in shapes]
        expected = [2 * _op(x, ta).astype(np.complex128) @ _op(y, tb) - 0.5 * z for x, y, z in zip(a, b, c)]
        out, info = bs.gemm(a, b, c, alpha=2, beta=-0.5, trans_a=ta, trans_b=tb)
        assert all(o is z for o, z in zip(out, c)) and (info == 0).all()
        for (m, n, k), o, e in zip(shapes, out, expected):
            if o.size:  # BLAS-style bound: |error| <= (k + 2) u (|alpha| |A| |B| + |beta| |C|) per entry
                assert np.abs(o - e).max() / ((k + 2) * u * (2 * k + 1)) < TOLERANCE
    # C is written in place: every C_i in one memory order, else an error naming the first that is not.
    other = "C" if order == "F" else "F"
    expect_argument_error("c[1]", bs.gemm, a[::2], b[::2], [c[0], c[2].copy(order=other), c[4]], trans_a=ta, trans_b=tb)
    expect_argument_error("a[0].shape", bs.gemm, [a[2]] + a[1:], b, c, trans_a=ta, trans_b=tb)
    expect_argument_error("trans_a", bs.gemm, a, b, c, trans_a="x")
    if np.issubdtype(dtype, np.floating):
        expect_argument_error("alpha", bs.gemm, a, b, c, alpha=1j, trans_a=ta, trans_b=tb)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_trsm_on_lists_of_different_sizes(seed, dtype, order, side):
    rng = np.random.default_rng(seed)
    sizes = [(4, 3), (1, 1), (7, 2), (5, 5), (0, 3), (40, 9)]
    u = unit_roundoff(dtype)
    for lower, trans, unit in [(True, "n", False), (False, "t", True), (True, "c", False), (False, "n", False)]:
        b = [rhs_batch(rng, 1, m, n, dtype)[0].copy(order=order) for m, n in sizes]
        a = []
        for m, n in sizes:
            k = m if side == "left" else n
            t = (rhs_batch(rng, 1, k, k, dtype)[0] + 2 * k * np.eye(k)).astype(dtype)  # well conditioned triangles
            t[np.triu_indices(k, 1) if lower else np.tril_indices(k, -1)] = np.nan  # never read
            if unit:
                np.fill_diagonal(t, np.nan)
            a.append(t.copy(order=order))
        b0 = [x.copy() for x in b]
        x, info = bs.trsm(a, b, side=side, lower=lower, trans=trans, unit_diagonal=unit, alpha=3)
        assert all(p is q for p, q in zip(x, b)) and (info == 0).all()
        for t, xi, bi in zip(a, x, b0):
            if not xi.size:
                continue
            tri = np.tril(np.nan_to_num(t)) if lower else np.triu(np.nan_to_num(t))
            if unit:
                np.fill_diagonal(tri, 1)
            op = _op(tri, trans).astype(np.complex128)
            r = (op @ xi if side == "left" else xi @ op) - 3 * bi
            k = tri.shape[0]
            assert np.abs(r).max() / (k * u * np.abs(op).max() * np.abs(xi).max()) < TOLERANCE
    expect_argument_error("a[0].shape", bs.trsm, [np.eye(2, dtype=dtype)] + a[1:], b, side=side)
    expect_argument_error("side", bs.trsm, a, b, side="top")


def test_bench_targets_on_the_cpu(tmp_path):
    """python -m batchsolve.bench end to end on the CPU backend (numpy peers): the JSON rows and the
    targets file (overhead at batch 16384, kept speed-up) written from them, a failing case never met."""
    from batchsolve import bench

    out = tmp_path / "bench.json"
    targets_out = tmp_path / "targets.json"
    rc = bench.main(["--device", "cpu", "--routine", "potrf", "--precision", "d", "--n", "4", "--batch", "16384",
                     "--repeat", "1", "--seed", "7", "--json", str(out), "--targets-out", str(targets_out)])
    assert rc == 0
    import json

    rows = json.loads(out.read_text())["rows"]
    report = json.loads(targets_out.read_text())
    assert {e["target"]["metric"] for e in report["targets"]} == {"overhead_us", "kept"}
    assert report["total"] == 2 and report["met"] == sum(e["met"] for e in report["targets"])
    by_metric = {e["target"]["metric"]: e for e in report["targets"]}
    assert by_metric["overhead_us"]["measured"] == rows[0]["overhead_us"]
    assert by_metric["overhead_us"]["met"] == (rows[0]["overhead_us"] <= 10.0)
    # a case that failed its accuracy check meets no target, whatever its times
    failed = dict(rows[0], ok=False, overhead_us=0.0, kept=1.0)
    assert not any(e["met"] for e in bench.targets([failed]))
    # the overhead target is judged at batch 16384 only
    assert [e["target"]["metric"] for e in bench.targets([dict(rows[0], batch=100000)])] == ["kept"]
