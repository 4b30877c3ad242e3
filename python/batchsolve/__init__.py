"""batchsolve: batched dense solvers for GPUs (and a CPU reference backend) on NumPy, PyTorch, CuPy
and JAX arrays, zero-copy.

    import torch, batchsolve
    a = ...                                   # (batch, n, n) SPD, CUDA tensor
    b = torch.randn(batch, n, 1, device="cuda", dtype=a.dtype)
    x, info = batchsolve.posv(a, b)           # A X = B on torch's current stream
    factor, info = batchsolve.potrf(a, overwrite_a=True, check=True)

Arrays in host memory run on the CPU backend (LAPACKE + OpenMP), device arrays on the CUDA backend
of their device. See the notes of :mod:`batchsolve._linalg` for memory orders (C-order matrices
are read through their transpose), and ``python -m batchsolve.bench`` for the side-by-side benchmark.
"""

from ._batchsolve import ArgumentError, CudaError, Error, NotCompiledError
from ._linalg import (
    LinAlgError,
    canonical_config,
    cuda_available,
    cuda_compiled,
    device_name,
    from_interleaved,
    gemm,
    posv,
    posv_mixed,
    potrf,
    potrs,
    prepare,
    reserve_workspace,
    synchronize,
    sysv_mixed,
    to_interleaved,
    trsm,
    workspace_bytes,
)

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "CudaError",
    "Error",
    "LinAlgError",
    "NotCompiledError",
    "canonical_config",
    "cuda_available",
    "cuda_compiled",
    "device_name",
    "from_interleaved",
    "gemm",
    "posv",
    "posv_mixed",
    "potrf",
    "potrs",
    "prepare",
    "reserve_workspace",
    "synchronize",
    "sysv_mixed",
    "to_interleaved",
    "trsm",
    "workspace_bytes",
]
