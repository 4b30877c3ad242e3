"""Shared helpers of the Python tests: SPD batches with a chosen condition number, fresh seeds that a
failure prints, and the error measures scaled by n and the precision's unit roundoff."""

from __future__ import annotations

import os

import numpy as np
import pytest

REAL_OF = {np.float32: np.float32, np.float64: np.float64, np.complex64: np.float32, np.complex128: np.float64}
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def unit_roundoff(dtype) -> float:
    return float(np.finfo(REAL_OF[dtype]).eps) / 2


@pytest.fixture
def seed(request) -> int:
    """A fresh seed per test (BATCHSOLVE_TEST_SEED pins it); printed with the test's name on failure."""
    value = int(os.environ.get("BATCHSOLVE_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    request.node.user_properties.append(("seed", value))
    print(f"seed={value}")
    return value


def spd_batch(rng, count: int, n: int, dtype, cond: float = 1e3) -> np.ndarray:
    """count Hermitian positive definite n x n matrices Q diag(d) Q^H, d log-spaced from 1 to 1/cond."""
    complex_ = np.issubdtype(dtype, np.complexfloating)
    g = rng.standard_normal((count, n, n))
    if complex_:
        g = g + 1j * rng.standard_normal((count, n, n))
    q, _ = np.linalg.qr(g)
    d = np.logspace(0, -np.log10(cond), n) if n else np.zeros(0)
    a = (q * d[None, None, :]) @ q.conj().transpose(0, 2, 1)
    a = 0.5 * (a + a.conj().transpose(0, 2, 1))
    return a.astype(dtype)


def rhs_batch(rng, count: int, n: int, nrhs: int, dtype) -> np.ndarray:
    b = rng.uniform(-1, 1, (count, n, nrhs))
    if np.issubdtype(dtype, np.complexfloating):
        b = b + 1j * rng.uniform(-1, 1, (count, n, nrhs))
    return b.astype(dtype)


def factor_residual(a: np.ndarray, factor: np.ndarray, lower: bool) -> float:
    """max over the batch of ||A - L L^H||_F / (n ||A||_F), computed in double."""
    a = a.astype(np.complex128)
    if lower:
        l = np.tril(factor.astype(np.complex128))
        r = a - l @ l.conj().transpose(0, 2, 1)
    else:
        u = np.triu(factor.astype(np.complex128))
        r = a - u.conj().transpose(0, 2, 1) @ u
    n = a.shape[-1]
    return float(np.max(np.linalg.norm(r, axis=(1, 2)) / (n * np.linalg.norm(a, axis=(1, 2)))))


def backward_error(a: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    """max over the batch of ||B - A X||_F / (n ||A||_F ||X||_F), computed in double."""
    a, x, b = (v.astype(np.complex128) for v in (a, x, b))
    n = a.shape[-1]
    r = b - a @ x
    den = n * np.linalg.norm(a, axis=(1, 2)) * np.linalg.norm(x, axis=(1, 2))
    return float(np.max(np.linalg.norm(r, axis=(1, 2)) / den))
