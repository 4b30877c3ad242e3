"""The solvers of the Python package: batched Cholesky (potrf, potrs, posv) on any array framework,
the layout conversions, the warm-up hooks and the mixed-precision symmetric indefinite solver.

Memory orders. A batch is an array of shape (batch, n, n) (right-hand sides (batch, n, nrhs) or
(batch, n)). Each matrix may be stored column-major ("Fortran order": unit stride down a column, any
leading dimension >= n), row-major ("C order": unit stride along a row) or interleaved (element (i, j)
of consecutive matrices adjacent, as :func:`to_interleaved` makes it); the batch stride is free.
The library works on column-major storage; a row-major matrix is the column-major storage of its
transpose, so it is handed over as that with the triangle flipped: ``lower=True`` on a C-order array
reads and writes the lower triangle as you index it (the library's upper triangle of the same memory).
For Hermitian matrices the transpose is the conjugate, which the solves undo by conjugating the
right-hand sides in place before and after (two passes over B, on C-order complex factors only).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np

from . import _batchsolve as _raw

try:  # the large-matrix and variable-size routines: a module of their own (see python/src/families_module.cpp)
    from . import _families
except ImportError as _families_error:  # e.g. a libbatchsolve older or newer than these entry points
    class _Unavailable:
        def __init__(self, error: ImportError):
            self.error = error

        def __getattr__(self, name: str):
            raise _raw.NotCompiledError(f"{name}: not available in this build of the Python package ({self.error})")

    _families = _Unavailable(_families_error)
from . import _arrays as _arrays_module
from ._arrays import CPU, Described, TorchAdapter, adapt, adapter_of, argument_error

COLUMN_MAJOR, INTERLEAVED, CHUNKED = 0, 1, 2  # layout codes of the raw entry points


class LinAlgError(_raw.Error):
    """Raised by ``check=True`` when matrices of the batch failed: ``failed`` holds their indices and
    ``info`` (a NumPy array) every matrix's LAPACK code (k > 0: the leading minor of order k is not
    positive definite; the batch was still processed, the other matrices' results are valid)."""

    def __init__(self, routine: str, info: np.ndarray):
        self.info = info
        self.failed = np.flatnonzero(info)
        shown = ", ".join(f"{int(k)} (leading minor {int(info[k])})" for k in self.failed[:10])
        more = f" and {len(self.failed) - 10} more" if len(self.failed) > 10 else ""
        super().__init__(f"{routine}: {len(self.failed)} of {info.size} matrices are not positive definite: "
                         f"matrix {shown}{more}")


class Layout(NamedTuple):
    """How one operand is handed to the library."""

    code: int  # COLUMN_MAJOR | INTERLEAVED | CHUNKED
    ld: int
    stride: int
    chunk: int
    transposed: bool  # row-major matrices: the column-major storage of the transpose


# ---- operands ---------------------------------------------------------------------------------------


def _batch_shape(d: Described) -> tuple[int, int, int, int]:
    """(count, rows, cols, chunk) of a 3-D batch, a 4-D chunked one (chunks, C, rows, cols) or a
    2-D batch of vectors (batch, n)."""
    if len(d.shape) == 2:
        return d.shape[0], d.shape[1], 1, 0
    if len(d.shape) == 4:
        return d.shape[0] * d.shape[1], d.shape[2], d.shape[3], d.shape[1]
    return d.shape[0], d.shape[1], d.shape[2], 0


def classify(d: Described, allow_transposed: bool) -> Layout | None:
    """The layout of a described batch, or None where the library cannot read it as it is stored."""
    count, rows, cols, chunk = _batch_shape(d)
    if chunk:
        c, q, i, j = d.strides
        if count == 0 or rows == 0 or cols == 0:
            return Layout(CHUNKED, rows, 0, chunk, False)
        if q == 1 and c == chunk * rows * cols:
            if (rows == 1 or i == chunk) and (cols == 1 or j == rows * chunk):
                return Layout(CHUNKED, rows, 0, chunk, False)
            if allow_transposed and (cols == 1 or j == chunk) and (rows == 1 or i == cols * chunk):
                return Layout(CHUNKED, rows, 0, chunk, True)
        return None
    sb, sr, sc = d.strides if len(d.strides) == 3 else tuple(d.strides) + (1,)
    if count == 0 or rows == 0 or cols == 0:
        return Layout(COLUMN_MAJOR, max(rows, 1), 0, 0, False)
    # Column-major per matrix: unit stride down a column (any stride is fine along a size-1 axis).
    if rows == 1 or sr == 1:
        ld = sc if cols > 1 else max(rows, 1)
        if ld >= rows:
            stride = sb if count > 1 else ld * cols
            if stride >= 0:
                return Layout(COLUMN_MAJOR, ld, stride, 0, False)
    if allow_transposed and (cols == 1 or sc == 1):
        ld = sr if rows > 1 else max(cols, 1)
        if ld >= cols:
            stride = sb if count > 1 else ld * rows
            if stride >= 0:
                return Layout(COLUMN_MAJOR, ld, stride, 0, True)
    if sb == 1 and count > 1:
        if (rows == 1 or sr == count) and (cols == 1 or sc == rows * count):
            return Layout(INTERLEAVED, rows, 0, 0, False)
        if allow_transposed and (cols == 1 or sc == count) and (rows == 1 or sr == cols * count):
            return Layout(INTERLEAVED, rows, 0, 0, True)
    return None


def _stream_value(stream, fw, x, device: int) -> int:
    if stream is None:
        return fw.stream(x, device) if device != CPU else 0
    if isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        value = getattr(stream, attribute, None)
        if value is not None:
            return int(value)
    raise argument_error("batchsolve", "stream", "None (the framework's current stream), an int (cudaStream_t) or a torch/cupy stream")


def _config_text(config) -> str:
    if config is None or config == "":
        return ""
    if isinstance(config, str):
        return config
    if isinstance(config, dict):
        return json.dumps(config)
    raise argument_error("batchsolve", "config", "None, a dict of CholeskyConfig fields or its JSON text")


class _Input(NamedTuple):
    fw: Any
    array: Any
    give_back: Any
    immutable: bool


def _input(routine: str, argument: str, x) -> _Input:
    fw = adapter_of(x)
    if fw is not None:
        if fw is TorchAdapter and x.requires_grad:
            x = x.detach()  # the solvers are not differentiable; results carry no graph
        return _Input(fw, x, None, False)
    foreign = adapt(routine, argument, x)
    fw = adapter_of(foreign.array)
    return _Input(fw, foreign.array, foreign.give_back, foreign.immutable)


def _same_place(routine: str, argument: str, d: Described, reference: Described, reference_name: str) -> None:
    if d.device != reference.device:
        where = lambda dev: "host memory" if dev == CPU else f"CUDA device {dev}"
        raise argument_error(routine, argument, f"the same device as '{reference_name}' ({where(reference.device)}; got {where(d.device)})")
    if d.precision != reference.precision:
        raise argument_error(routine, f"{argument}.dtype", f"the dtype of '{reference_name}'")


def _check_batch(routine: str, argument: str, d: Described, square: bool) -> None:
    if len(d.shape) not in (3, 4):
        shape = "(batch, n, n) or chunked (chunks, chunk, n, n)" if square else "(batch, n, nrhs), (batch, n) or chunked"
        raise argument_error(routine, f"{argument}.shape", f"{shape} (got {d.shape})")
    if square and d.shape[-1] != d.shape[-2]:
        raise argument_error(routine, f"{argument}.shape", f"square matrices (got {d.shape[-2]} x {d.shape[-1]})")


def _writable_target(routine: str, name: str, inp: _Input, overwrite: bool, out, *, allow_transposed: bool,
                     any_layout: bool = False, described: Described | None = None):
    """The array a routine writes its result into and how the library sees it: `out` (the input
    copied in), the input itself (overwrite) or a fresh copy of it. Its layout is None where the
    library cannot use it as stored, which only callers that solve in a temporary accept (any_layout)."""
    fw, x = inp.fw, inp.array
    if out is not None:
        if adapter_of(out) is not fw:
            raise argument_error(routine, "out", f"an array of the same framework as '{name}' ({fw.name})")
        dx, do = fw.describe(routine, name, x), fw.describe(routine, "out", out)
        _same_place(routine, "out", do, dx, name)
        if tuple(do.shape) != tuple(dx.shape):
            raise argument_error(routine, "out.shape", f"the shape of '{name}' {tuple(dx.shape)} (got {tuple(do.shape)})")
        if not fw.writable(out):
            raise argument_error(routine, "out", "a writable array")
        layout = classify(do, allow_transposed)
        if layout is None and not any_layout:
            raise argument_error(routine, "out", "each matrix stored with unit stride down its columns or along its rows, or interleaved")
        if do.address != dx.address:
            fw.assign(out, x)
        return out, do, layout, True
    if overwrite:
        if inp.immutable:
            raise argument_error(routine, f"overwrite_{name}", f"False: '{name}' is immutable (a JAX array)")
        if not fw.writable(x):
            raise argument_error(routine, name, f"a writable array for overwrite_{name}=True (read-only, or a torch tensor with its lazy conjugate/negative bit set)")
        d = described if described is not None else fw.describe(routine, name, x)
        layout = classify(d, allow_transposed)
        if layout is None and not any_layout:
            raise argument_error(routine, name, f"each matrix stored with unit stride down its columns or along its rows, or interleaved, for overwrite_{name}=True")
        return x, d, layout, True
    source = fw.readable(x) if fw is TorchAdapter else x
    copy = fw.copy(source)
    d = fw.describe(routine, name, copy)
    layout = classify(d, allow_transposed)
    if layout is None:  # e.g. a 4-D input whose strides are not chunked: compact per matrix instead
        copy = fw.copy_fortran(source)
        d = fw.describe(routine, name, copy)
        layout = classify(d, allow_transposed)
    return copy, d, layout, False


def _info_array(routine: str, fw, like, count: int, info, device: int):
    """The int32 info array of a call (new, or the caller's `info` checked) and its address."""
    if info is None:
        arr = fw.empty(like, (count,), int32=True)
        return arr, fw.int32_address(routine, arr, count, device)
    if adapter_of(info) is not fw:
        raise argument_error(routine, "info", f"an int32 array of the same framework ({fw.name})")
    return info, fw.int32_address(routine, info, count, device)


def _raise_on_failures(routine: str, fw, info) -> None:
    host = np.asarray(fw.to_host(info))
    if host.any():
        raise LinAlgError(routine, host)


def _solve_operand(routine: str, inp: _Input, overwrite: bool, out, a_layout: Layout, d_a: Described):
    """The right-hand sides' target in a layout that matches the factor's: the array the caller sees
    (target), the one the library works on (work: the target, or a temporary copied back after) and
    its layout."""
    fw = inp.fw
    x = inp.array
    d_in = fw.describe(routine, "b", x)
    _same_place(routine, "b", d_in, d_a, "a")
    vector = len(d_in.shape) == 2
    count_a = _batch_shape(d_a)[0]
    if vector:
        if d_in.shape[0] != count_a:
            raise argument_error(routine, "b.shape", f"(batch, n) or (batch, n, nrhs) with batch = {count_a} (got {d_in.shape})")
    else:
        _check_batch(routine, "b", d_in, square=False)
    target, d, layout, _ = _writable_target(routine, "b", inp, overwrite, out, allow_transposed=False, any_layout=True)
    work = target[..., None] if vector else target
    if vector:
        d = fw.describe(routine, "b", work)
        layout = classify(d, allow_transposed=False)
    count, rows, cols, chunk = _batch_shape(d)
    n = d_a.shape[-1]
    if count != count_a or rows != n or (len(d.shape) == 4) != (len(d_a.shape) == 4) or (chunk and chunk != a_layout.chunk):
        raise argument_error(routine, "b.shape", f"{'(chunks, chunk, ' if a_layout.code == CHUNKED else '(batch, '}n, nrhs) matching 'a' "
                                                 f"(a: {tuple(d_a.shape)}, b: {tuple(d_in.shape)})")
    family = lambda code: code if code != CHUNKED else INTERLEAVED
    if layout is not None and family(layout.code) == family(a_layout.code):
        return target, work, d, layout, False
    # B's storage does not match A's family: solve in a temporary of the right one and copy back.
    if a_layout.code == COLUMN_MAJOR:
        temp = fw.copy_fortran(work)
    elif a_layout.code == INTERLEAVED:
        temp = fw.strided_empty(work, tuple(work.shape), (2, 1, 0))
        fw.assign(temp, work)
    else:
        temp = fw.strided_empty(work, tuple(work.shape), (0, 3, 2, 1))
        fw.assign(temp, work)
    d = fw.describe(routine, "b", temp)
    return target, temp, d, classify(d, allow_transposed=False), True


# ---- the hot path ---------------------------------------------------------------------------------------

_PRECISION_CODE = {"s": 0, "d": 1, "c": 2, "z": 3}
_ROUTINE_CODE = {"potrf": 0, "potrs": 1, "posv": 2}
_ADAPTERS = _arrays_module._ADAPTERS


def _fast_layout(d: Described):
    """(ld, batch stride, row-major) of a 3-D batch of matrices stored column- or row-major with more
    than one entry in every dimension, else None (then the general path decides)."""
    shape, strides = d.shape, d.strides
    if len(shape) != 3 or shape[0] < 2 or shape[1] < 2 or shape[2] < 2 or strides[0] < 0:
        return None
    if strides[1] == 1 and strides[2] >= shape[1]:
        return strides[2], strides[0], False
    if strides[2] == 1 and strides[1] >= shape[2]:
        return strides[1], strides[0], True
    return None


def _fast(routine: str, a, b, lower: bool, overwrite_a: bool, overwrite_b: bool, info, check: bool, stream):
    """potrf/potrs/posv for the everyday call (NumPy/PyTorch/CuPy arrays, column- or row-major matrices,
    no out/config): the general path's checks and results with fewer steps, since the Python layer's
    time adds to every call. Returns None wherever the general path must decide."""
    fw = _ADAPTERS.get(type(a))
    if fw is None or not fw.plain(a, overwrite_a):
        return None
    d = fw.describe(routine, "a", a)
    la = _fast_layout(d)
    if la is None or d.shape[1] != d.shape[2]:
        return None
    count, n = d.shape[0], d.shape[1]
    nrhs = 0
    b_address = ldb = stride_b = 0
    if b is not None:
        if _ADAPTERS.get(type(b)) is not fw or not fw.plain(b, overwrite_b):
            return None
        if la[2] and d.precision in "cz":
            return None  # row-major complex factors conjugate B: the general path
        db = fw.describe(routine, "b", b)
        if len(db.shape) != 3 or db.shape[0] != count or db.shape[1] != n or db.device != d.device or db.precision != d.precision:
            return None
        nrhs = db.shape[2]
        if db.strides[1] != 1 and nrhs > 1 or db.strides[0] < 0 or (nrhs > 1 and db.strides[2] < n):
            return None
    if routine != "potrs" and not overwrite_a:
        a = fw.copy(a)
        d = fw.describe(routine, "a", a)
        la = _fast_layout(d)
        if la is None:
            return None
    if b is not None:
        if not overwrite_b:
            b = fw.copy(b)
            db = fw.describe(routine, "b", b)
            if db.strides[1] != 1 and nrhs > 1:
                return None  # (a copy keeps the memory order; checked above)
        b_address, stride_b = db.address, db.strides[0]
        ldb = db.strides[2] if nrhs > 1 else n
    info_arr, info_address = None, 0
    if routine != "potrs":
        if info is None:
            info_arr = fw.empty(a, (count,), int32=True)
            info_address = fw.address(info_arr)
        elif _ADAPTERS.get(type(info)) is fw:
            info_arr, info_address = info, fw.int32_address(routine, info, count, d.device)
        else:
            return None
    _raw.cholesky_fast(_ROUTINE_CODE[routine], _PRECISION_CODE[d.precision], d.device,
                       (fw.stream(a, d.device) if d.device != CPU else 0) if stream is None else _stream_value(stream, fw, a, d.device),
                       lower != la[2], n, nrhs, count, COLUMN_MAJOR, d.address, la[0], la[1], b_address, ldb, stride_b, 0,
                       info_address)
    if check:
        _raise_on_failures(routine, fw, info_arr)
    if routine == "potrf":
        return a, info_arr
    if routine == "potrs":
        return b
    return b, info_arr


# ---- the routines ------------------------------------------------------------------------------------


def potrf(a, *, lower: bool = True, overwrite_a: bool = False, out=None, info=None, check: bool = False,
          stream=None, config=None):
    """Cholesky factorisation of a batch of Hermitian positive definite matrices.

    a: (batch, n, n) float32/float64/complex64/complex128 array of NumPy (CPU backend), PyTorch,
       CuPy or any DLPack/``__cuda_array_interface__`` framework; column-major, row-major (C order:
       read through its transpose, see the module notes) or interleaved matrices; or a chunked batch
       (chunks, chunk, n, n) from :func:`to_interleaved`. Only the ``lower`` (else upper) triangle is
       read, as you index the array.
    lower: factor A = L L^H into the lower triangle (else A = U^H U into the upper one). The other
       triangle is left as it was (LAPACK's convention; apply tril/triu for a clean factor).
    overwrite_a: factor in place in ``a`` (zero copies) instead of a new array.
    out: an array of a's shape, framework and device to receive the factor (a is copied into it).
    info: a preallocated int32 array of shape (batch,) on a's device to reuse (saves an allocation).
    check: raise :class:`LinAlgError` listing the failing matrices (reads info back: a synchronisation).
    stream: the CUDA stream to run on; default the framework's current stream (PyTorch's
       ``torch.cuda.current_stream()``, CuPy's ``cupy.cuda.get_current_stream()``).
    config: a kernel configuration (dict or JSON of ``batchsolve::CholeskyConfig`` fields) to pin
       instead of the tuning table's choice.

    Returns ``(factor, info)``: info[k] = 0 for success, k > 0 when the leading minor of order k of
    matrix k is not positive definite (the rest of the batch is unaffected); both arrays of a's
    framework and device.
    """
    if out is None and config is None:
        result = _fast("potrf", a, None, lower, overwrite_a, False, info, check, stream)
        if result is not None:
            return result
    if isinstance(a, (list, tuple)):
        if out is not None:
            raise argument_error("potrf", "out", "None for a list of matrices (overwrite_a=True factors them in place)")
        return _potrf_vbatched(a, lower, overwrite_a, info, check, stream)
    inp = _input("potrf", "a", a)
    fw = inp.fw
    d_a = fw.describe("potrf", "a", inp.array)
    if len(d_a.shape) == 2:
        return _potrf_large(inp, d_a, lower, overwrite_a, out, info, check, stream)
    _check_batch("potrf", "a", d_a, square=True)
    target, d, layout, _ = _writable_target("potrf", "a", inp, overwrite_a, out, allow_transposed=True, described=d_a)
    count, n = _batch_shape(d)[0], d.shape[-1]
    info_arr, info_address = _info_array("potrf", fw, target, count, info, d.device)
    if count == 0 or n == 0:
        _zero(fw, info_arr)
    else:
        _raw.cholesky("potrf", d.precision, d.device, _stream_value(stream, fw, target, d.device), lower != layout.transposed,
                      n, 0, count, layout.code, d.address, layout.ld, layout.stride, 0, 0, 0, layout.chunk, info_address,
                      _config_text(config))
    if check:
        _raise_on_failures("potrf", fw, info_arr)
    if inp.give_back is not None:
        return inp.give_back(target), inp.give_back(info_arr)
    return target, info_arr


def potrs(factor, b, *, lower: bool = True, overwrite_b: bool = False, out=None, stream=None, config=None):
    """Solves A X = B with the Cholesky factors of :func:`potrf` (same ``lower``, same array layout).

    factor: (batch, n, n) as potrf returned it (only its ``lower``/upper triangle is read).
    b: (batch, n, nrhs) or (batch, n) right-hand sides of factor's framework, device and dtype.
       Column-major right-hand sides (Fortran order per matrix, e.g. ``x.mT.contiguous().mT``) and
       single vectors are solved where they are; C-order B with nrhs > 1 goes through one transposed
       copy. Interleaved factors take interleaved B (``to_interleaved(b)``).
    overwrite_b / out: solve in b itself, or into ``out`` (b copied in); default a new array.

    Returns X (an array of b's framework). Matrices whose factorisation failed give NaN/inf or
    garbage: check potrf's info first.
    """
    if out is None and config is None:
        result = _fast("potrs", factor, b, lower, True, overwrite_b, None, False, stream)
        if result is not None:
            return result
    a_in = _input("potrs", "factor", factor)
    fw = a_in.fw
    d_a = fw.describe("potrs", "factor", a_in.array)
    if len(d_a.shape) == 2:
        return _potrs_large(a_in, d_a, b, lower, overwrite_b, out, stream)
    _check_batch("potrs", "factor", d_a, square=True)
    layout_a = classify(d_a, allow_transposed=True)
    if layout_a is None:
        a_in = _Input(fw, fw.copy(a_in.array), a_in.give_back, a_in.immutable)
        d_a = fw.describe("potrs", "factor", a_in.array)
        layout_a = classify(d_a, allow_transposed=True)
    b_in = _input("potrs", "b", b)
    if b_in.fw is not fw:
        raise argument_error("potrs", "b", f"an array of factor's framework ({fw.name})")
    target, work, d_b, layout_b, temporary = _solve_operand("potrs", b_in, overwrite_b, out, layout_a, d_a)
    count, n, nrhs = _batch_shape(d_b)[0], d_a.shape[-1], d_b.shape[-1]
    if count and n and nrhs:
        conj = layout_a.transposed and d_a.precision in "cz"
        if conj:
            fw.conjugate_(work)
        _raw.cholesky("potrs", d_a.precision, d_a.device, _stream_value(stream, fw, work, d_a.device),
                      lower != layout_a.transposed, n, nrhs, count, layout_a.code, d_a.address, layout_a.ld, layout_a.stride,
                      d_b.address, layout_b.ld, layout_b.stride, layout_a.chunk, 0, _config_text(config))
        if conj:
            fw.conjugate_(work)
        if temporary:
            fw.assign(target if target.ndim == work.ndim else target[..., None], work)
    return b_in.give_back(target) if b_in.give_back is not None else target


def posv(a, b, *, lower: bool = True, overwrite_a: bool = False, overwrite_b: bool = False, out=None, info=None,
         check: bool = False, stream=None, config=None):
    """Solves A X = B for a batch of Hermitian positive definite A: potrf and potrs in one call.

    a: (batch, n, n) as for :func:`potrf`; with ``overwrite_a=True`` it holds the factor afterwards,
       else a is left untouched (the factorisation runs in a copy).
    b: (batch, n, nrhs) or (batch, n) as for :func:`potrs`; ``overwrite_b``/``out`` as there.
    info, check, stream, config: as for :func:`potrf`. The right-hand sides of a failed matrix are
       left as they were.

    Returns ``(x, info)`` in the arrays' framework.
    """
    if out is None and config is None:
        result = _fast("posv", a, b, lower, overwrite_a, overwrite_b, info, check, stream)
        if result is not None:
            return result
    a_in = _input("posv", "a", a)
    fw = a_in.fw
    d_a0 = fw.describe("posv", "a", a_in.array)
    if len(d_a0.shape) == 2:
        factor, info_arr = _potrf_large(a_in, d_a0, lower, overwrite_a, None, info, False, stream, routine="posv")
        if check:
            _raise_on_failures("posv", fw, info_arr)
        x = _potrs_large(_Input(fw, factor, None, False), fw.describe("posv", "a", factor), b, lower, overwrite_b, out,
                         stream, routine="posv")
        give_back = a_in.give_back
        return (give_back(x), give_back(info_arr)) if give_back is not None else (x, info_arr)
    _check_batch("posv", "a", d_a0, square=True)
    b_in = _input("posv", "b", b)
    if b_in.fw is not fw:
        raise argument_error("posv", "b", f"an array of a's framework ({fw.name})")
    a_target, d_a, layout_a, _ = _writable_target("posv", "a", a_in, overwrite_a, None, allow_transposed=True, described=d_a0)
    target, work, d_b, layout_b, temporary = _solve_operand("posv", b_in, overwrite_b, out, layout_a, d_a)
    count, n, nrhs = _batch_shape(d_a)[0], d_a.shape[-1], d_b.shape[-1]
    info_arr, info_address = _info_array("posv", fw, a_target, count, info, d_a.device)
    if count == 0 or n == 0:
        _zero(fw, info_arr)
    else:
        conj = layout_a.transposed and d_a.precision in "cz" and nrhs > 0
        if conj:
            fw.conjugate_(work)
        _raw.cholesky("posv", d_a.precision, d_a.device, _stream_value(stream, fw, work, d_a.device),
                      lower != layout_a.transposed, n, nrhs, count, layout_a.code, d_a.address, layout_a.ld, layout_a.stride,
                      d_b.address, layout_b.ld, layout_b.stride, layout_a.chunk, info_address, _config_text(config))
        if conj:
            fw.conjugate_(work)
        if temporary:
            fw.assign(target if target.ndim == work.ndim else target[..., None], work)
    if check:
        _raise_on_failures("posv", fw, info_arr)
    if b_in.give_back is not None:
        return b_in.give_back(target), b_in.give_back(info_arr)
    return target, info_arr


def _zero(fw, info_arr) -> None:
    if info_arr.shape[0]:
        fw.assign(info_arr, fw.zeros_int32(info_arr, info_arr.shape[0]))


# ---- one large matrix (cholesky_large.hpp) and variable-size batches (vbatched_triangular.hpp) ------


def _single_layout(d: Described) -> Layout | None:
    """The layout of one (n, n) or (n, nrhs) matrix: a batch of one."""
    rows, cols = d.shape
    return classify(Described(d.device, d.address, (1, rows, cols), (rows * cols,) + tuple(d.strides), d.precision),
                    allow_transposed=rows == cols)


def _potrf_large(inp: _Input, d_a: Described, lower: bool, overwrite_a: bool, out, info, check: bool, stream,
                 routine: str = "potrf"):
    fw, x = inp.fw, inp.array
    if d_a.shape[0] != d_a.shape[1]:
        raise argument_error(routine, "a.shape", f"a square matrix (n, n) or a batch (batch, n, n) (got {d_a.shape})")
    if out is not None:
        if adapter_of(out) is not fw or tuple(fw.describe(routine, "out", out).shape) != tuple(d_a.shape):
            raise argument_error(routine, "out", f"an array of a's framework and shape {tuple(d_a.shape)}")
        fw.assign(out, x)
        target = out
    elif overwrite_a:
        if inp.immutable or not fw.writable(x):
            raise argument_error(routine, "a", "a writable array for overwrite_a=True")
        target = x
    else:
        target = fw.copy(fw.readable(x) if fw is TorchAdapter else x)
    d = fw.describe(routine, "a", target)
    layout = _single_layout(d)
    if layout is None:
        if target is x or target is out:
            raise argument_error(routine, "a", "unit stride down the columns or along the rows, to be factored in place")
        target = fw.copy_fortran(target[None])[0]
        d = fw.describe(routine, "a", target)
        layout = _single_layout(d)
    info_arr, info_address = _info_array(routine, fw, target, 1, info, d.device)
    n = d.shape[0]
    if n == 0:
        _zero(fw, info_arr)
    else:
        _families.large("potrf", d.precision, d.device, _stream_value(stream, fw, target, d.device), lower != layout.transposed,
                   n, 0, d.address, layout.ld, 0, 0, info_address)
    if check:
        _raise_on_failures(routine, fw, info_arr)
    if inp.give_back is not None:
        return inp.give_back(target), inp.give_back(info_arr)
    return target, info_arr


def _potrs_large(a_in: _Input, d_a: Described, b, lower: bool, overwrite_b: bool, out, stream, routine: str = "potrs"):
    fw = a_in.fw
    layout_a = _single_layout(d_a)
    if d_a.shape[0] != d_a.shape[1]:
        raise argument_error(routine, "a.shape", f"a square matrix (n, n) (got {d_a.shape})")
    if layout_a is None:
        a_arr = fw.copy_fortran(a_in.array[None])[0]
        d_a = fw.describe(routine, "a", a_arr)
        layout_a = _single_layout(d_a)
    b_in = _input(routine, "b", b)
    if b_in.fw is not fw:
        raise argument_error(routine, "b", f"an array of the factor's framework ({fw.name})")
    d_b = fw.describe(routine, "b", b_in.array)
    _same_place(routine, "b", d_b, d_a, "a")
    n = d_a.shape[0]
    if len(d_b.shape) not in (1, 2) or d_b.shape[0] != n:
        raise argument_error(routine, "b.shape", f"({n},) or ({n}, nrhs) (got {d_b.shape})")
    if out is not None:
        if adapter_of(out) is not fw or tuple(fw.describe(routine, "out", out).shape) != tuple(d_b.shape):
            raise argument_error(routine, "out", f"an array of b's framework and shape {tuple(d_b.shape)}")
        fw.assign(out, b_in.array)
        target = out
    elif overwrite_b:
        if b_in.immutable or not fw.writable(b_in.array):
            raise argument_error(routine, "b", "a writable array for overwrite_b=True")
        target = b_in.array
    else:
        target = fw.copy(b_in.array)
    work = target[:, None] if len(d_b.shape) == 1 else target
    d_w = fw.describe(routine, "b", work)
    temporary = not (d_w.strides[0] == 1 or n <= 1 or d_w.shape[1] == 0)
    if temporary:
        work = fw.copy_fortran(work[None])[0]
        d_w = fw.describe(routine, "b", work)
    nrhs = d_w.shape[1]
    if n and nrhs:
        ldb = d_w.strides[1] if nrhs > 1 else max(n, 1)
        _families.large("potrs", d_a.precision, d_a.device, _stream_value(stream, fw, work, d_a.device), lower != layout_a.transposed,
                   n, nrhs, d_a.address, layout_a.ld, d_w.address, ldb, 0)
        if temporary:
            fw.assign(target if target.ndim == 2 else target[:, None], work)
    return b_in.give_back(target) if b_in.give_back is not None else target


def _potrf_vbatched(matrices, lower: bool, overwrite_a: bool, info, check: bool, stream):
    """potrf on a list of square matrices of different orders: one potrf_vbatched call."""
    if len(matrices) == 0:
        raise argument_error("potrf", "a", "a non-empty list of matrices (the framework of the info array follows them)")
    inputs = [_input("potrf", f"a[{k}]", m) for k, m in enumerate(matrices)]
    fw = inputs[0].fw
    targets, layouts, described = [], [], []
    for k, inp in enumerate(inputs):
        if inp.fw is not fw:
            raise argument_error("potrf", f"a[{k}]", f"an array of the framework of a[0] ({fw.name})")
        x = inp.array
        if overwrite_a:
            if inp.immutable or not fw.writable(x):
                raise argument_error("potrf", f"a[{k}]", "a writable array for overwrite_a=True")
            target = x
        else:
            target = fw.copy(fw.readable(x) if fw is TorchAdapter else x)
        d = fw.describe("potrf", f"a[{k}]", target)
        if len(d.shape) != 2 or d.shape[0] != d.shape[1]:
            raise argument_error("potrf", f"a[{k}].shape", f"a square matrix (got {d.shape})")
        if described:
            _same_place("potrf", f"a[{k}]", d, described[0], "a[0]")
        layout = _single_layout(d)
        if layout is None or (layouts and layout.transposed != layouts[0].transposed):
            # One uplo for the whole call: every matrix in a[0]'s memory order (column-major when in doubt).
            if overwrite_a:
                raise argument_error("potrf", f"a[{k}]", "the memory order of a[0] (all column-major or all row-major) for overwrite_a=True")
            target = fw.copy_fortran(target[None])[0] if not (layouts and layouts[0].transposed) else fw.copy(target)
            d = fw.describe("potrf", f"a[{k}]", target)
            layout = _single_layout(d)
        targets.append(target), layouts.append(layout), described.append(d)
    transposed = layouts[0].transposed
    count = len(targets)
    orders = np.array([d.shape[0] for d in described], dtype=np.int32)
    lds = np.array([max(l.ld, 1) for l in layouts], dtype=np.int32)
    pointers = np.array([d.address for d in described], dtype=np.uint64)
    device = described[0].device
    like = targets[0]
    n_dev, ld_dev, ptr_dev = (fw.from_host(v, like) for v in (orders, lds, pointers.view(np.int64)))
    info_arr, info_address = _info_array("potrf", fw, like, count, info, device)
    _families.potrf_vbatched(described[0].precision, device, _stream_value(stream, fw, like, device), lower != transposed,
                        fw.int32_address("potrf", n_dev, count, device), fw.address(ptr_dev),
                        fw.int32_address("potrf", ld_dev, count, device), count, int(orders.max()), info_address)
    del n_dev, ld_dev, ptr_dev  # stream-ordered frameworks keep them until the kernels that read them ran
    if check:
        _raise_on_failures("potrf", fw, info_arr)
    give_back = inputs[0].give_back
    if give_back is not None:
        return [give_back(t) for t in targets], give_back(info_arr)
    return targets, info_arr


class _MatrixList(NamedTuple):
    """A list of matrices of one framework, device and dtype, each stored column-major (or, with
    row_major, each row-major: the column-major storage of its transpose)."""

    arrays: list
    described: list
    lds: list
    row_major: bool


def _matrix_list(routine: str, name: str, matrices, fw, row_major: bool | None, writable: bool,
                 reference: Described | None = None, reference_name: str = "") -> _MatrixList:
    """Describes a list operand; matrices not stored in the wanted order are copied into it (refused
    for an operand written in place). row_major None: the order of the first matrix decides."""
    if not isinstance(matrices, (list, tuple)) or len(matrices) == 0:
        raise argument_error(routine, name, "a non-empty list of 2-D arrays")
    arrays, described, lds = [], [], []
    for k, m in enumerate(matrices):
        inp = _input(routine, f"{name}[{k}]", m)
        if fw is None:
            fw = inp.fw
        if inp.fw is not fw:
            raise argument_error(routine, f"{name}[{k}]", f"an array of the framework of the other operands ({fw.name})")
        x = inp.array
        d = fw.describe(routine, f"{name}[{k}]", x)
        if len(d.shape) != 2:
            raise argument_error(routine, f"{name}[{k}].shape", f"a 2-D matrix (got {d.shape})")
        if reference is None:
            reference, reference_name = d, f"{name}[0]"
        _same_place(routine, f"{name}[{k}]", d, reference, reference_name)
        rows, cols = d.shape
        empty = rows == 0 or cols == 0  # strides of an empty array mean nothing
        column_ok = empty or rows <= 1 or d.strides[0] == 1
        row_ok = empty or cols <= 1 or d.strides[1] == 1
        if row_major is None:
            row_major = not column_ok and row_ok
        if not (row_ok if row_major else column_ok) or (writable and (inp.immutable or not fw.writable(x))):
            if writable:
                raise argument_error(routine, f"{name}[{k}]", f"a writable {'row' if row_major else 'column'}-major "
                                                              f"matrix like {name}[0] (it is written in place)")
            x = fw.copy_c(x) if row_major else fw.copy_fortran(x[None])[0]
            d = fw.describe(routine, f"{name}[{k}]", x)
        if row_major:
            ld = d.strides[0] if rows > 1 and not empty else max(cols, 1)
        else:
            ld = d.strides[1] if cols > 1 and not empty else max(rows, 1)
        arrays.append(x), described.append(d), lds.append(max(ld, 1))
    return _MatrixList(arrays, described, lds, bool(row_major))


def _device_arrays(fw, like, *columns):
    """int32 (sizes) and int64 (pointers) arrays on the operands' device, from host lists."""
    out = []
    for values, dtype in columns:
        host = np.asarray(values, dtype=dtype)
        out.append(fw.from_host(host, like))
    return out


def _list_info(routine: str, fw, like, count: int, info, device: int):
    info_arr, address = _info_array(routine, fw, like, count, info, device)
    return info_arr, address


def _raise_on_argument_codes(routine: str, fw, info, names: dict) -> None:
    host = np.asarray(fw.to_host(info))
    bad = np.flatnonzero(host)
    if bad.size:
        shown = ", ".join(f"{int(k)} ({names.get(-int(host[k]), f'argument {-int(host[k])}')})" for k in bad[:10])
        error = _raw.Error(f"{routine}: {bad.size} of {host.size} problems were refused: problem {shown}")
        error.info, error.failed = host, bad
        raise error


def _scalar(routine: str, name: str, value, precision: str) -> complex:
    value = complex(value)
    if value.imag and precision in "sd":
        raise argument_error(routine, name, f"a real number for real matrices (got {value})")
    return value


_OPS = {"n": "n", "t": "t", "c": "c", "no_trans": "n", "trans": "t", "conj_trans": "c"}


def gemm(a, b, c, *, alpha=1.0, beta=0.0, trans_a: str = "n", trans_b: str = "n", info=None, check: bool = False,
         stream=None):
    """C_i <- alpha op(A_i) op(B_i) + beta C_i for lists of matrices of different sizes (one
    gemm_vbatched call; op is "n", "t" or "c"). Every C_i is updated in place and must be writable;
    all C_i column-major or all row-major (A_i, B_i in another order are copied into C's). Returns
    ``(c, info)``: info[i] = -p when problem i's p-th BLAS argument was invalid (it is then skipped);
    ``check=True`` raises :class:`Error` for those."""
    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and isinstance(c, (list, tuple))):
        raise argument_error("gemm", "a", "lists of 2-D matrices for a, b and c")
    if not (len(a) == len(b) == len(c)):
        raise argument_error("gemm", "b", f"lists of one length (a: {len(a)}, b: {len(b)}, c: {len(c)})")
    ta, tb = _OPS.get(str(trans_a).lower()), _OPS.get(str(trans_b).lower())
    if ta is None or tb is None:
        raise argument_error("gemm", "trans_a" if ta is None else "trans_b", "'n', 't' or 'c'")
    cs = _matrix_list("gemm", "c", c, None, None, writable=True)
    fw = adapter_of(cs.arrays[0])
    ref = cs.described[0]
    as_ = _matrix_list("gemm", "a", a, fw, cs.row_major, writable=False, reference=ref, reference_name="c[0]")
    bs_ = _matrix_list("gemm", "b", b, fw, cs.row_major, writable=False, reference=ref, reference_name="c[0]")
    ms, ns, ks = [], [], []
    for i, (da, db, dc) in enumerate(zip(as_.described, bs_.described, cs.described)):
        m, n = dc.shape
        am, ak = da.shape if ta == "n" else da.shape[::-1]
        bk, bn = db.shape if tb == "n" else db.shape[::-1]
        if am != m or bn != n or ak != bk:
            raise argument_error("gemm", f"a[{i}].shape", f"op(a[{i}]) m x k, op(b[{i}]) k x n and c[{i}] m x n "
                                                          f"(got {da.shape}, {db.shape}, {dc.shape})")
        ms.append(m), ns.append(n), ks.append(ak)
    precision = ref.precision
    alpha_, beta_ = _scalar("gemm", "alpha", alpha, precision), _scalar("gemm", "beta", beta, precision)
    # Row-major storage is the column-major storage of the transpose: C^T = op(B)^T op(A)^T, so the
    # operands swap and so do m and n; each op stays what it was.
    if cs.row_major:
        as_, bs_, ta, tb, ms, ns = bs_, as_, tb, ta, ns, ms
    count = len(ms)
    like = cs.arrays[0]
    m_d, n_d, k_d, lda_d, ldb_d, ldc_d, pa, pb, pc = _device_arrays(
        fw, like, (ms, np.int32), (ns, np.int32), (ks, np.int32), (as_.lds, np.int32), (bs_.lds, np.int32),
        (cs.lds, np.int32), ([d.address for d in as_.described], np.uint64), ([d.address for d in bs_.described], np.uint64),
        ([d.address for d in cs.described], np.uint64))
    info_arr, info_address = _list_info("gemm", fw, like, count, info, ref.device)
    i32 = lambda v: fw.int32_address("gemm", v, count, ref.device)
    _families.gemm_vbatched(precision, ref.device, _stream_value(stream, fw, like, ref.device), ta, tb, i32(m_d), i32(n_d),
                       i32(k_d), alpha_, fw.address(pa), i32(lda_d), fw.address(pb), i32(ldb_d), beta_, fw.address(pc),
                       i32(ldc_d), max(ms), max(ns), max(ks), count, info_address)
    del m_d, n_d, k_d, lda_d, ldb_d, ldc_d, pa, pb, pc, as_, bs_  # stream-ordered frameworks keep them until read
    if check:
        _raise_on_argument_codes("gemm", fw, info_arr, {3: "m", 4: "n", 5: "k", 8: "lda", 10: "ldb", 13: "ldc"})
    return list(cs.arrays), info_arr


def trsm(a, b, *, side: str = "left", lower: bool = True, trans: str = "n", unit_diagonal: bool = False, alpha=1.0,
         info=None, check: bool = False, stream=None):
    """Solves op(A_i) X_i = alpha B_i (side="left") or X_i op(A_i) = alpha B_i (side="right") for lists
    of triangular A_i and B_i of different sizes (one trsm_vbatched call); X_i overwrites B_i, which must
    be writable, all column-major or all row-major (A_i in another order are copied into B's). Only the
    ``lower`` (else upper) triangle of A_i is read, and not its diagonal with ``unit_diagonal``.
    Returns ``(b, info)`` (info[i] = -p: problem i's p-th BLAS argument was invalid)."""
    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
        raise argument_error("trsm", "a", "lists of 2-D matrices of one length for a and b")
    if side not in ("left", "right"):
        raise argument_error("trsm", "side", f"'left' or 'right' (got {side!r})")
    op = _OPS.get(str(trans).lower())
    if op is None:
        raise argument_error("trsm", "trans", "'n', 't' or 'c'")
    bs_ = _matrix_list("trsm", "b", b, None, None, writable=True)
    fw = adapter_of(bs_.arrays[0])
    ref = bs_.described[0]
    as_ = _matrix_list("trsm", "a", a, fw, bs_.row_major, writable=False, reference=ref, reference_name="b[0]")
    ms, ns = [], []
    for i, (da, db) in enumerate(zip(as_.described, bs_.described)):
        m, n = db.shape
        order = m if side == "left" else n
        if da.shape != (order, order):
            raise argument_error("trsm", f"a[{i}].shape", f"({order}, {order}) for b[{i}] of shape {db.shape}, side={side} (got {da.shape})")
        ms.append(m), ns.append(n)
    left, lower_ = side == "left", lower
    # Row-major: X^T op(A)^T = alpha B^T, the transposes being the column-major views: the side and the
    # triangle flip, m and n swap, the op stays.
    if bs_.row_major:
        left, lower_, ms, ns = not left, not lower, ns, ms
    count = len(ms)
    like = bs_.arrays[0]
    m_d, n_d, lda_d, ldb_d, pa, pb = _device_arrays(
        fw, like, (ms, np.int32), (ns, np.int32), (as_.lds, np.int32), (bs_.lds, np.int32),
        ([d.address for d in as_.described], np.uint64), ([d.address for d in bs_.described], np.uint64))
    info_arr, info_address = _list_info("trsm", fw, like, count, info, ref.device)
    i32 = lambda v: fw.int32_address("trsm", v, count, ref.device)
    _families.trsm_vbatched(ref.precision, ref.device, _stream_value(stream, fw, like, ref.device), left, lower_, op,
                       bool(unit_diagonal), i32(m_d), i32(n_d), _scalar("trsm", "alpha", alpha, ref.precision),
                       fw.address(pa), i32(lda_d), fw.address(pb), i32(ldb_d), max(ms), max(ns), count, info_address)
    del m_d, n_d, lda_d, ldb_d, pa, pb, as_
    if check:
        _raise_on_argument_codes("trsm", fw, info_arr, {5: "m", 6: "n", 9: "lda", 11: "ldb"})
    return list(bs_.arrays), info_arr


def posv_mixed(a, b, *, lower: bool = True, out=None, max_iterations: int = 30, tensor_core_updates: bool = False,
               allow_fallback: bool = True, stream=None):
    """Solves A X = B for one large symmetric positive definite float64 A (cholesky_large.hpp): Cholesky
    in float32 and refinement in float64, falling back to a float64 factorisation where refinement
    fails. a: (n, n), column-major or row-major, only the ``lower`` (else upper) triangle read;
    b: (n,) or (n, nrhs). Both are read only. Returns ``(x, report)`` (path, iterations, backward errors,
    every step tried). A system no allowed step solves gives X full of NaN and path "none"."""
    a_in = _input("posv_mixed", "a", a)
    fw = a_in.fw
    d_a = fw.describe("posv_mixed", "a", a_in.array)
    if len(d_a.shape) != 2 or d_a.shape[0] != d_a.shape[1]:
        raise argument_error("posv_mixed", "a.shape", f"(n, n) (got {d_a.shape})")
    n = d_a.shape[0]
    layout = _single_layout(d_a)
    source = a_in.array
    if layout is None:
        source = fw.copy_fortran(source[None])[0]
        d_a = fw.describe("posv_mixed", "a", source)
        layout = _single_layout(d_a)
    b_in = _input("posv_mixed", "b", b)
    if b_in.fw is not fw:
        raise argument_error("posv_mixed", "b", f"an array of a's framework ({fw.name})")
    d_b = fw.describe("posv_mixed", "b", b_in.array)
    _same_place("posv_mixed", "b", d_b, d_a, "a")
    if len(d_b.shape) not in (1, 2) or d_b.shape[0] != n:
        raise argument_error("posv_mixed", "b.shape", f"({n},) or ({n}, nrhs) (got {d_b.shape})")
    vector = len(d_b.shape) == 1
    b_work = b_in.array[:, None] if vector else b_in.array
    if not (fw.describe("posv_mixed", "b", b_work).strides[0] == 1 or n <= 1):
        b_work = fw.copy_fortran(b_work[None])[0]
    x_work = fw.copy_fortran(b_work[None])[0]
    db, dx = fw.describe("posv_mixed", "b", b_work), fw.describe("posv_mixed", "x", x_work)
    nrhs = db.shape[1]
    ld_of = lambda d: d.strides[1] if d.shape[1] > 1 else max(n, 1)
    # A symmetric real A in row-major order is its own transpose: the other triangle of the same memory.
    report = _families.posv_mixed(d_a.precision, d_a.device, _stream_value(stream, fw, source, d_a.device),
                             lower != layout.transposed, n, nrhs, d_a.address, layout.ld, db.address, ld_of(db),
                             dx.address, ld_of(dx), max_iterations, tensor_core_updates, allow_fallback)
    result = x_work[:, 0] if vector else x_work
    if out is not None:
        if adapter_of(out) is not fw:
            raise argument_error("posv_mixed", "out", f"an array of b's framework ({fw.name})")
        fw.assign(out, result)
        result = out
    return (b_in.give_back(result) if b_in.give_back is not None else result), report


# ---- layouts ---------------------------------------------------------------------------------------


def to_interleaved(a, chunk: int | None = None):
    """A copy of a (batch, rows, cols) batch in the interleaved layout (element (i, j) of consecutive
    matrices adjacent), made by the library's conversion kernels. Without ``chunk`` it is returned as a
    (batch, rows, cols) array whose strides are (1, batch, rows * batch): index it as usual; every
    routine recognises the layout from the strides. With ``chunk`` (batch must be a multiple of it)
    it is the chunked layout, returned 4-D as (batch // chunk, chunk, rows, cols)."""
    inp = _input("to_interleaved", "a", a)
    fw, x = inp.fw, inp.array
    d = fw.describe("to_interleaved", "a", x)
    if len(d.shape) != 3:
        raise argument_error("to_interleaved", "a.shape", f"(batch, rows, cols) (got {d.shape})")
    count, rows, cols = d.shape
    if chunk is None:
        dst = fw.strided_empty(x, (count, rows, cols), (2, 1, 0))
        dst_code, dst_chunk = INTERLEAVED, 0
    else:
        if chunk < 1 or count % chunk:
            raise argument_error("to_interleaved", "chunk", f"a divisor of the batch size {count} (got {chunk})")
        dst = fw.strided_empty(x, (count // chunk, chunk, rows, cols), (0, 3, 2, 1))
        dst_code, dst_chunk = CHUNKED, chunk
    _convert(fw, x, d, dst, dst_code, dst_chunk, "to_interleaved")
    return inp.give_back(dst) if inp.give_back is not None else dst


def from_interleaved(x, order: str = "F"):
    """A copy of an interleaved or chunked batch (as :func:`to_interleaved` made it) as a compact
    (batch, rows, cols) array with column-major matrices (order="F", the library's own) or row-major
    ones (order="C")."""
    inp = _input("from_interleaved", "x", x)
    fw, arr = inp.fw, inp.array
    d = fw.describe("from_interleaved", "x", arr)
    count, rows, cols, _ = _batch_shape(d) if len(d.shape) in (3, 4) else (0, 0, 0, 0)
    if len(d.shape) not in (3, 4):
        raise argument_error("from_interleaved", "x.shape", f"(batch, rows, cols) or (chunks, chunk, rows, cols) (got {d.shape})")
    if order not in ("F", "C"):
        raise argument_error("from_interleaved", "order", f"'F' or 'C' (got {order!r})")
    dst = fw.strided_empty(arr, (count, rows, cols), (0, 2, 1) if order == "F" else (0, 1, 2))
    layout = classify(d, allow_transposed=False)
    if layout is None or layout.code == COLUMN_MAJOR or order == "C":
        # Not interleaved (or a row-major target, which the library does not write): the framework copies.
        fw.assign(dst, arr.reshape(count, rows, cols) if len(d.shape) == 4 else arr)
    else:
        dd = fw.describe("from_interleaved", "dst", dst)
        _raw.convert_layout(d.precision, d.device, _stream_value(None, fw, arr, d.device), rows, cols, count,
                            layout.code, d.address, layout.ld, layout.stride, layout.chunk,
                            COLUMN_MAJOR, dd.address, rows, rows * cols, 0)
    return inp.give_back(dst) if inp.give_back is not None else dst


def _convert(fw, x, d: Described, dst, dst_code: int, dst_chunk: int, routine: str) -> None:
    layout = classify(d, allow_transposed=False)
    dd = fw.describe(routine, "dst", dst)
    count, rows, cols = d.shape
    if layout is None or layout.code != COLUMN_MAJOR or count == 0 or rows == 0 or cols == 0:
        if count and rows and cols:  # row-major or otherwise strided: the framework's strided copy
            fw.assign(dst, x if dst_code != CHUNKED else x.reshape(dst.shape))
        return
    _raw.convert_layout(d.precision, d.device, _stream_value(None, fw, x, d.device), rows, cols, count,
                        COLUMN_MAJOR, d.address, layout.ld, layout.stride, 0, dst_code, dd.address, rows, 0, dst_chunk)


# ---- warm-up and tuning ------------------------------------------------------------------------------

_ROUTINES = ("potrf", "potrs", "posv")


def prepare(routine: str, a, nrhs: int = 1, *, lower: bool = True, config=None) -> dict:
    """Compiles (or loads from the disk cache) the kernel that ``routine`` would run on batches shaped
    and stored like ``a``, without running it, and returns the library's report (kernel name,
    resolved configuration, registers, occupancy, compile time). Call it once per shape before timing
    or serving, so that NVRTC never runs inside a timed or latency-sensitive call. On the CPU backend
    the report says the call reaches no generated kernel."""
    if routine not in _ROUTINES:
        raise argument_error("prepare", "routine", f"one of {', '.join(_ROUTINES)} (got {routine!r})")
    inp = _input("prepare", "a", a)
    d = inp.fw.describe("prepare", "a", inp.array)
    _check_batch("prepare", "a", d, square=True)
    layout = classify(d, allow_transposed=True) or Layout(COLUMN_MAJOR, d.shape[-1], 0, 0, False)
    count, n = _batch_shape(d)[0], d.shape[-1]
    return _raw.prepare_kernel(routine, d.precision, d.device, lower != layout.transposed, n, nrhs, count, layout.code,
                               layout.chunk, _config_text(config))


def workspace_bytes(routine: str, a, nrhs: int = 1, *, lower: bool = True, config=None) -> int:
    """Bytes of library workspace a call of ``routine`` on batches like ``a`` takes; pass them to
    :func:`reserve_workspace` before a timed loop so that no call allocates."""
    if routine not in _ROUTINES:
        raise argument_error("workspace_bytes", "routine", f"one of {', '.join(_ROUTINES)} (got {routine!r})")
    inp = _input("workspace_bytes", "a", a)
    d = inp.fw.describe("workspace_bytes", "a", inp.array)
    _check_batch("workspace_bytes", "a", d, square=True)
    layout = classify(d, allow_transposed=True) or Layout(COLUMN_MAJOR, d.shape[-1], 0, 0, False)
    return _raw.workspace_bytes(routine, d.precision, d.device, lower != layout.transposed, d.shape[-1], nrhs,
                                _batch_shape(d)[0], layout.code, layout.chunk, _config_text(config))


def reserve_workspace(nbytes: int, device: int = 0, stream=None) -> None:
    """Grows the library workspace of CUDA device ``device`` (-1: the CPU backend) to ``nbytes`` now,
    for the calls on ``stream`` (each stream has its own; default the legacy default stream, which
    PyTorch and CuPy use unless told otherwise)."""
    _raw.reserve_workspace(device, int(nbytes), _stream_value(stream, None, None, CPU) if stream is not None else 0)


def canonical_config(config) -> dict:
    """Every field of a kernel configuration (dict or JSON) as the library reads it; an unknown field
    or bad value raises ArgumentError naming it."""
    return json.loads(_raw.canonical_config(_config_text(config) or "{}"))


# ---- symmetric indefinite, mixed precision ------------------------------------------------------------


def sysv_mixed(a, b, *, hermitian: bool | None = None, lower: bool = True, out=None, allow_rbt: bool = True,
               allow_pivoted: bool = True, start_with_rbt: bool = False, max_iterations: int = 30,
               tensor_core_updates: bool = False, stream=None):
    """Solves A X = B for one large symmetric (or Hermitian) indefinite A in double precision
    (float64 or complex128): LDL^T without pivoting in single precision, refined in double, with the
    library's fallback chain (random butterflies, then pivoted Bunch-Kaufman) where that fails.

    a: (n, n), any memory order (a column-major A is read where it is; others, and an upper
       triangle, go through one column-major copy of A); only the ``lower`` (else upper) triangle is
       read. Read only, as is b.
    b: (n, nrhs) or (n,). out: an (n, nrhs)/(n,) array for X; default a new one.
    hermitian: complex A Hermitian (LDL^H) rather than complex symmetric; default True for complex.
    Returns ``(x, report)``: report is a dict with the path taken, iterations, backward errors and
    every step tried. A system no allowed step solves gives X full of NaN and path "none".
    """
    a_in = _input("sysv_mixed", "a", a)
    fw = a_in.fw
    d_a = fw.describe("sysv_mixed", "a", a_in.array)
    if len(d_a.shape) != 2 or d_a.shape[0] != d_a.shape[1]:
        raise argument_error("sysv_mixed", "a.shape", f"(n, n) (got {d_a.shape})")
    n = d_a.shape[0]
    complex_a = d_a.precision in "cz"
    if hermitian is None:
        hermitian = complex_a
    # The library reads the lower triangle of column-major storage. An upper triangle is the lower
    # triangle of the transpose (conjugated for Hermitian A), and both equal A as a matrix.
    source = a_in.array if lower else a_in.array.T
    d_s = fw.describe("sysv_mixed", "a", source)
    la = classify(Described(d_s.device, d_s.address, (1, n, n), (0,) + tuple(d_s.strides), d_s.precision), False)
    if la is None or not lower:
        source = fw.copy_fortran(source[None])[0]
        if not lower and hermitian and complex_a:
            fw.conjugate_(source)
        d_s = fw.describe("sysv_mixed", "a", source)
        la = classify(Described(d_s.device, d_s.address, (1, n, n), (0,) + tuple(d_s.strides), d_s.precision), False)
    b_in = _input("sysv_mixed", "b", b)
    if b_in.fw is not fw:
        raise argument_error("sysv_mixed", "b", f"an array of a's framework ({fw.name})")
    d_b = fw.describe("sysv_mixed", "b", b_in.array)
    _same_place("sysv_mixed", "b", d_b, d_a, "a")
    if len(d_b.shape) not in (1, 2) or d_b.shape[0] != n:
        raise argument_error("sysv_mixed", "b.shape", f"({n},) or ({n}, nrhs) (got {d_b.shape})")
    vector = len(d_b.shape) == 1
    b_work = b_in.array[:, None] if vector else b_in.array
    d_bw = fw.describe("sysv_mixed", "b", b_work)
    if not (d_bw.strides[0] == 1 or n <= 1):  # B is only read: any column-major storage will do
        b_work = fw.copy_fortran(b_work[None])[0]
    x_work = fw.copy_fortran(b_work[None])[0]  # a column-major (n, nrhs) array that X overwrites
    db, dx = fw.describe("sysv_mixed", "b", b_work), fw.describe("sysv_mixed", "x", x_work)
    nrhs = db.shape[1]
    ld_of = lambda d: d.strides[1] if d.shape[1] > 1 else max(n, 1)
    report = _raw.sysv_mixed(d_s.precision, d_s.device, _stream_value(stream, fw, source, d_s.device), hermitian,
                             True, n, nrhs, d_s.address, la.ld, db.address, ld_of(db), dx.address, ld_of(dx),
                             allow_rbt, allow_pivoted, start_with_rbt, max_iterations, tensor_core_updates)
    result = x_work[:, 0] if vector else x_work
    if out is not None:
        if adapter_of(out) is not fw:
            raise argument_error("sysv_mixed", "out", f"an array of b's framework ({fw.name})")
        fw.assign(out, result)
        result = out
    return (b_in.give_back(result) if b_in.give_back is not None else result), report


# ---- the machine -------------------------------------------------------------------------------------


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a device is usable."""
    return bool(_raw.cuda_available())


def cuda_compiled() -> bool:
    """True when this build of the library has its CUDA backend."""
    return bool(_raw.cuda_compiled())


def device_name(device: int = 0) -> str:
    """The GPU's name (device >= 0) or "CPU (N threads)" for device -1."""
    return _raw.device_name(device)


def synchronize(device: int = 0, stream=None) -> None:
    """Waits for the work issued on ``stream`` of the device (default the legacy default stream); the
    framework's own synchronisation (torch.cuda.synchronize(), ...) does the same for its streams."""
    _raw.synchronize(device, _stream_value(stream, None, None, CPU) if stream is not None else 0)
