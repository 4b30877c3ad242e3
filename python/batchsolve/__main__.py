"""python -m batchsolve: what this installation can run (backends, devices, framework versions).
The benchmark is python -m batchsolve.bench (--help)."""

import sys

import batchsolve as bs


def main() -> int:
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__)
        return 0
    print(f"batchsolve {bs.__version__} ({bs.__file__})")
    print(f"  CPU backend: {bs.device_name(-1)}")
    print(f"  CUDA backend compiled: {bs.cuda_compiled()}, a device usable: {bs.cuda_available()}"
          + (f" ({bs.device_name(0)})" if bs.cuda_available() else ""))
    try:
        from batchsolve import _families  # noqa: F401

        print("  large-matrix and variable-size routines: available")
    except ImportError as e:
        print(f"  large-matrix and variable-size routines: NOT available ({e})")
    for name in ("numpy", "torch", "cupy", "jax"):
        try:
            module = __import__(name)
            print(f"  {name} {getattr(module, '__version__', '?')}")
        except ImportError:
            print(f"  {name}: not installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
