"""Framework adapters: what the raw entry points need to know about a NumPy, PyTorch or CuPy array
(address, shape, strides in elements, precision, device), and the few operations the solvers need
from the array's own framework (empty arrays, copies, the current stream, in-place conjugation).

Nothing here copies data unless a function says so: the solvers work in the caller's memory.
Objects of other frameworks (JAX, anything with ``__dlpack__`` or ``__cuda_array_interface__``) are
wrapped zero-copy into one of the three by :func:`adapt` and the results handed back through DLPack.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import numpy as np

from . import _batchsolve as _raw

CPU = -1  # device index of the CPU backend in the raw entry points

_PRECISION_OF_NUMPY = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}
_NUMPY_OF_PRECISION = {v: k for k, v in _PRECISION_OF_NUMPY.items()}
_ITEMSIZE = {"s": 4, "d": 8, "c": 8, "z": 16}


def argument_error(routine: str, argument: str, condition: str) -> Exception:
    """An ArgumentError worded as the library's: "<routine>: invalid argument '<argument>': <condition>"."""
    e = _raw.ArgumentError(f"{routine}: invalid argument '{argument}': {condition}")
    e.routine, e.argument, e.condition = routine, argument, condition
    return e


class Described(NamedTuple):
    """One array as the raw entry points see it."""

    device: int  # -1: host memory (CPU backend), else the CUDA device index
    address: int
    shape: tuple
    strides: tuple  # in elements
    precision: str  # "s" | "d" | "c" | "z"


_INT32 = np.dtype(np.int32)


def check_info(routine: str, is_int32: bool, shape: tuple, stride: int, where: int, count: int, device: int, dtype) -> None:
    """An info array must be int32, of shape (count,), contiguous, where the operands are."""
    if not is_int32:
        raise argument_error(routine, "info.dtype", f"int32 (got {dtype})")
    if tuple(shape) != (count,) or (count > 1 and stride != 1) or where != device:
        raise argument_error(routine, "info", f"a contiguous int32 array of shape ({count},) on the operands' device "
                                              f"(got shape {tuple(shape)}, element stride {stride}, device {where})")


# ---- the three frameworks --------------------------------------------------------------------------


class NumpyAdapter:
    name = "numpy"

    @staticmethod
    def describe(routine: str, argument: str, x: np.ndarray) -> Described:
        p = _PRECISION_OF_NUMPY.get(x.dtype)
        if p is None:
            raise argument_error(routine, f"{argument}.dtype", f"float32, float64, complex64 or complex128 (got {x.dtype})")
        itemsize = x.itemsize
        strides = tuple(s // itemsize for s in x.strides)
        if any(s * itemsize != b for s, b in zip(strides, x.strides)):
            raise argument_error(routine, f"{argument}.strides", f"multiples of the element size (got {x.strides} bytes)")
        return Described(CPU, x.__array_interface__["data"][0], x.shape, strides, p)

    @staticmethod
    def writable(x: np.ndarray) -> bool:
        return bool(x.flags.writeable)

    @staticmethod
    def plain(x: np.ndarray, written: bool) -> bool:
        """x may be read (and, when written, written) through its address as it is."""
        return not written or bool(x.flags.writeable)

    @staticmethod
    def int32_address(routine: str, x: np.ndarray, count: int, device: int) -> int:
        check_info(routine, x.dtype == _INT32, x.shape, x.strides[0] // 4 if x.ndim == 1 else 0, CPU, count, device, x.dtype)
        return x.__array_interface__["data"][0]

    @staticmethod
    def empty(like: np.ndarray, shape: tuple, precision: str | None = None, *, int32: bool = False) -> np.ndarray:
        dtype = np.int32 if int32 else (_NUMPY_OF_PRECISION[precision] if precision else like.dtype)
        return np.empty(shape, dtype=dtype)

    @staticmethod
    def zeros_int32(like: np.ndarray, count: int) -> np.ndarray:
        return np.zeros(count, dtype=np.int32)

    @staticmethod
    def copy(x: np.ndarray) -> np.ndarray:
        return np.array(x, order="K", copy=True)  # keeps each matrix's memory order, compacted

    @staticmethod
    def copy_fortran(x: np.ndarray) -> np.ndarray:
        """A copy (always) in which every matrix (last two axes) is column-major and compact."""
        return np.swapaxes(x, -1, -2).copy(order="C").swapaxes(-1, -2)

    @staticmethod
    def copy_c(x: np.ndarray) -> np.ndarray:
        """A copy (always) in which every matrix is row-major and compact."""
        return x.copy(order="C")

    @staticmethod
    def assign(dst: np.ndarray, src: np.ndarray) -> None:
        np.copyto(dst, src)

    @staticmethod
    def conjugate_(x: np.ndarray) -> None:
        np.conjugate(x, out=x)

    @staticmethod
    def strided_empty(like: np.ndarray, shape: tuple, order: tuple, precision: str | None = None) -> np.ndarray:
        """An empty array of `shape` stored with axes in `order` (slowest first), returned as a view."""
        dtype = _NUMPY_OF_PRECISION[precision] if precision else like.dtype
        base = np.empty(tuple(shape[a] for a in order), dtype=dtype)
        return base.transpose(np.argsort(order))

    @staticmethod
    def stream(x: Any, device: int) -> int:
        return 0

    @staticmethod
    def from_host(x: np.ndarray, like: np.ndarray) -> np.ndarray:
        return x

    @staticmethod
    def address(x: np.ndarray) -> int:
        return x.__array_interface__["data"][0]

    @staticmethod
    def to_host(x: np.ndarray) -> np.ndarray:
        return x

    @staticmethod
    def synchronize(x: Any) -> None:
        pass


class TorchAdapter:
    name = "torch"
    _torch = None
    _precision = None
    _dtype = None

    @classmethod
    def _load(cls):
        import torch

        cls._torch = torch
        cls._precision = {torch.float32: "s", torch.float64: "d", torch.complex64: "c", torch.complex128: "z"}
        cls._dtype = {v: k for k, v in cls._precision.items()}
        # The raw current stream of a device without building a Stream object (a few microseconds).
        cls._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    @classmethod
    def describe(cls, routine: str, argument: str, x) -> Described:
        p = cls._precision.get(x.dtype)
        if p is None:
            raise argument_error(routine, f"{argument}.dtype", f"float32, float64, complex64 or complex128 (got {x.dtype})")
        if x.is_cuda:
            index = x.get_device()  # an int: cheaper than building x.device
        elif x.device.type == "cpu":
            index = CPU
        else:
            raise argument_error(routine, f"{argument}.device", f"a CPU or CUDA tensor (got {x.device})")
        return Described(index, x.data_ptr(), tuple(x.shape), tuple(x.stride()), p)

    @classmethod
    def int32_address(cls, routine: str, x, count: int, device: int) -> int:
        where = x.get_device() if x.is_cuda else (CPU if x.device.type == "cpu" else -2)
        check_info(routine, x.dtype is cls._torch.int32, x.shape, x.stride()[0] if x.dim() == 1 else 0, where,
                   count, device, x.dtype)
        return x.data_ptr()

    @staticmethod
    def plain(x, written: bool) -> bool:
        return not (x.requires_grad or x.is_conj() or x.is_neg())

    @staticmethod
    def writable(x) -> bool:
        # A tensor with the lazy conjugate or negative bit set stores something else than it shows.
        return not (x.is_conj() or x.is_neg())

    @classmethod
    def readable(cls, x):
        """x with its lazy conjugate/negative bits resolved (a copy only when one is set)."""
        if x.is_conj() or x.is_neg():
            return x.resolve_conj().resolve_neg()
        return x

    @classmethod
    def empty(cls, like, shape: tuple, precision: str | None = None, *, int32: bool = False):
        dtype = cls._torch.int32 if int32 else (cls._dtype[precision] if precision else like.dtype)
        return cls._torch.empty(shape, dtype=dtype, device=like.device)

    @classmethod
    def zeros_int32(cls, like, count: int):
        return cls._torch.zeros(count, dtype=cls._torch.int32, device=like.device)

    @staticmethod
    def copy(x):
        return x.detach().clone()  # preserve_format: each matrix keeps its memory order where dense

    @staticmethod
    def copy_fortran(x):
        return x.detach().mT.clone(memory_format=TorchAdapter._torch.contiguous_format).mT

    @classmethod
    def copy_c(cls, x):
        return x.detach().clone(memory_format=cls._torch.contiguous_format)

    @staticmethod
    def assign(dst, src) -> None:
        dst.copy_(src)

    @staticmethod
    def conjugate_(x) -> None:
        x.conj_physical_()

    @classmethod
    def strided_empty(cls, like, shape: tuple, order: tuple, precision: str | None = None):
        dtype = cls._dtype[precision] if precision else like.dtype
        base = cls._torch.empty(tuple(shape[a] for a in order), dtype=dtype, device=like.device)
        return base.permute(*[int(i) for i in np.argsort(order)])

    @classmethod
    def stream(cls, x, device: int) -> int:
        if device < 0:
            return 0
        if cls._raw_stream is not None:
            return cls._raw_stream(device)
        return cls._torch.cuda.current_stream(device).cuda_stream

    @staticmethod
    def to_host(x) -> np.ndarray:
        return x.detach().cpu().numpy()

    @classmethod
    def from_host(cls, x: np.ndarray, like):
        return cls._torch.from_numpy(x).to(like.device)

    @staticmethod
    def address(x) -> int:
        return x.data_ptr()

    @classmethod
    def synchronize(cls, x) -> None:
        if x.device.type == "cuda":
            cls._torch.cuda.synchronize(x.device)


class CupyAdapter:
    name = "cupy"
    _cupy = None
    _precision = None

    @classmethod
    def _load(cls):
        import cupy

        cls._cupy = cupy
        cls._precision = {np.dtype(k): v for k, v in _PRECISION_OF_NUMPY.items()}

    @classmethod
    def describe(cls, routine: str, argument: str, x) -> Described:
        p = cls._precision.get(x.dtype)
        if p is None:
            raise argument_error(routine, f"{argument}.dtype", f"float32, float64, complex64 or complex128 (got {x.dtype})")
        itemsize = x.itemsize
        strides = tuple(s // itemsize for s in x.strides)
        if any(s * itemsize != b for s, b in zip(strides, x.strides)):
            raise argument_error(routine, f"{argument}.strides", f"multiples of the element size (got {x.strides} bytes)")
        return Described(x.device.id, x.data.ptr, x.shape, strides, p)

    @staticmethod
    def writable(x) -> bool:
        return True

    @staticmethod
    def plain(x, written: bool) -> bool:
        return True

    @staticmethod
    def int32_address(routine: str, x, count: int, device: int) -> int:
        check_info(routine, x.dtype == _INT32, x.shape, x.strides[0] // 4 if x.ndim == 1 else 0, x.device.id, count, device, x.dtype)
        return x.data.ptr

    @classmethod
    def empty(cls, like, shape: tuple, precision: str | None = None, *, int32: bool = False):
        dtype = np.int32 if int32 else (_NUMPY_OF_PRECISION[precision] if precision else like.dtype)
        with like.device:
            return cls._cupy.empty(shape, dtype=dtype)

    @classmethod
    def zeros_int32(cls, like, count: int):
        with like.device:
            return cls._cupy.zeros(count, dtype=np.int32)

    @classmethod
    def copy(cls, x):
        with x.device:
            return cls._cupy.array(x, order="K", copy=True)

    @classmethod
    def copy_fortran(cls, x):
        with x.device:
            return cls._cupy.array(cls._cupy.swapaxes(x, -1, -2), order="C", copy=True).swapaxes(-1, -2)

    @classmethod
    def copy_c(cls, x):
        with x.device:
            return cls._cupy.array(x, order="C", copy=True)

    @classmethod
    def assign(cls, dst, src) -> None:
        with dst.device:
            cls._cupy.copyto(dst, src)

    @classmethod
    def conjugate_(cls, x) -> None:
        with x.device:
            cls._cupy.conjugate(x, out=x)

    @classmethod
    def strided_empty(cls, like, shape: tuple, order: tuple, precision: str | None = None):
        dtype = _NUMPY_OF_PRECISION[precision] if precision else like.dtype
        with like.device:
            base = cls._cupy.empty(tuple(shape[a] for a in order), dtype=dtype)
        return base.transpose(tuple(int(i) for i in np.argsort(order)))

    @classmethod
    def stream(cls, x, device: int) -> int:
        return cls._cupy.cuda.get_current_stream(device).ptr

    @staticmethod
    def to_host(x) -> np.ndarray:
        return x.get()

    @classmethod
    def from_host(cls, x: np.ndarray, like):
        with like.device:
            return cls._cupy.asarray(x)

    @staticmethod
    def address(x) -> int:
        return x.data.ptr

    @staticmethod
    def synchronize(x) -> None:
        x.device.synchronize()


_ADAPTERS: dict[type, Any] = {np.ndarray: NumpyAdapter}


def adapter_of(x) -> Any | None:
    """The adapter of x's framework (None for other objects: see adapt)."""
    t = type(x)
    a = _ADAPTERS.get(t)
    if a is not None:
        return a
    module = t.__module__.split(".", 1)[0]
    if module == "torch" and "torch" in sys.modules:
        import torch

        if isinstance(x, torch.Tensor):
            if TorchAdapter._torch is None:
                TorchAdapter._load()
            _ADAPTERS[t] = TorchAdapter
            return TorchAdapter
    if module == "cupy" and "cupy" in sys.modules:
        import cupy

        if isinstance(x, cupy.ndarray):
            if CupyAdapter._cupy is None:
                CupyAdapter._load()
            _ADAPTERS[t] = CupyAdapter
            return CupyAdapter
    if isinstance(x, np.ndarray):  # subclasses
        _ADAPTERS[t] = NumpyAdapter
        return NumpyAdapter
    return None


class Foreign(NamedTuple):
    """A foreign array wrapped zero-copy into a framework the solvers know, and the way back."""

    array: Any
    give_back: Any  # callable: a result array of the wrapping framework -> the caller's framework
    immutable: bool  # the caller's framework does not allow writing into its arrays (JAX)


def adapt(routine: str, argument: str, x) -> Foreign:
    """Wraps an object with __cuda_array_interface__ or __dlpack__ (JAX, Numba, ...) zero-copy into
    CuPy, PyTorch (device memory) or NumPy (host memory). Results go back through the caller's
    framework's from_dlpack, so a JAX caller gets JAX arrays."""
    module = type(x).__module__.split(".", 1)[0]
    immutable = module in ("jax", "jaxlib")
    back_module = sys.modules.get(module)
    give_back = _identity
    if module in ("jax", "jaxlib"):
        import jax.numpy as jnp

        give_back = jnp.from_dlpack
        # JAX does not name its streams: the array must be computed before another stream reads it.
        if hasattr(x, "block_until_ready"):
            x.block_until_ready()
    elif back_module is not None and hasattr(back_module, "from_dlpack"):
        give_back = back_module.from_dlpack
    if hasattr(x, "__cuda_array_interface__"):
        for name in ("cupy", "torch"):
            try:
                framework = __import__(name)
            except ImportError:
                continue
            wrapped = framework.asarray(x) if name == "cupy" else framework.as_tensor(x, device="cuda")
            return Foreign(wrapped, give_back, immutable)
        raise argument_error(routine, argument, "an array CuPy or PyTorch can wrap (__cuda_array_interface__ needs one of them installed)")
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type, _ = x.__dlpack_device__()
        if int(device_type) == 1:  # kDLCPU
            return Foreign(np.from_dlpack(x), give_back, immutable)
        if int(device_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged
            for name in ("cupy", "torch"):
                try:
                    framework = __import__(name)
                except ImportError:
                    continue
                return Foreign(framework.from_dlpack(x), give_back, immutable)
            raise argument_error(routine, argument, "an array CuPy or PyTorch can wrap (DLPack device arrays need one of them installed)")
        raise argument_error(routine, argument, f"an array in host or CUDA memory (DLPack device type {int(device_type)})")
    raise argument_error(
        routine, argument,
        f"an array: numpy.ndarray, torch.Tensor, cupy.ndarray or any object with __dlpack__ or __cuda_array_interface__ (got {type(x).__name__})")


def _identity(x):
    return x
