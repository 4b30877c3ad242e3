#!/usr/bin/env python3
"""Side-by-side validation of `bem` against bempp-cl 0.4.2 on the same unit-sphere meshes.

For each case (a Gmsh sphere of element size h, or the 8,192-triangle octasphere) the mesh is made
once by `bem sphere` and written as PLY; both codes then solve the sound-soft plane-wave problem with
P0 (DP0) elements, V phi = -u_inc (incident direction +x), by dense LU, and evaluate the far field
at 181 angles in the xy-plane. bempp-cl's far field is compared with the Mie series computed here
with scipy's spherical Bessel functions; bem's error is the one `bem validate` reports against its
own series (an independent implementation: the two errors agree to four digits where the solutions do).
Writes results/bempp_comparison.{json,md} with machine, commit and date.

usage: bempp_compare.py --bem BUILD/apps/bem_acoustics/bem [--threads 2] [--cases all|small]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

CASES = [  # (label, bem sphere arguments, wavenumber): 10 elements per wavelength by mean edge
    ("gmsh h=0.198", ["--kind", "gmsh", "--h", "0.198"], 3.4),
    ("gmsh h=0.0992", ["--kind", "gmsh", "--h", "0.0992"], 6.6),
    ("gmsh h=0.0688", ["--kind", "gmsh", "--h", "0.0688"], 9.4),
    ("octasphere L5", ["--kind", "octa", "--level", "5"], 10.6),
]


def read_ply_ascii(path):
    import numpy as np
    with open(path) as f:
        lines = f.read().splitlines()
    nv = nf = 0
    for i, line in enumerate(lines):
        if line.startswith("element vertex"):
            nv = int(line.split()[2])
        elif line.startswith("element face"):
            nf = int(line.split()[2])
        elif line == "end_header":
            body = lines[i + 1:]
            break
    vertices = np.array([[float(v) for v in l.split()] for l in body[:nv]])
    faces = np.array([[int(v) for v in l.split()[1:4]] for l in body[nv:nv + nf]], dtype=np.uint32)
    return vertices, faces


def mie_far_field(k, theta):
    """Sound-soft unit sphere: F(theta) = (i/k) sum (2n+1) j_n(k)/h_n(k) P_n(cos theta)."""
    import numpy as np
    from scipy.special import eval_legendre, spherical_jn, spherical_yn
    nmax = int(k + 4 * k ** (1 / 3) + 10)
    total = np.zeros_like(theta, dtype=complex)
    for n in range(nmax + 1):
        j, y = spherical_jn(n, k), spherical_yn(n, k)
        total += (2 * n + 1) * j / (j + 1j * y) * eval_legendre(n, np.cos(theta))
    return 1j / k * total


def rel_l2(f, ref):
    import numpy as np
    return float(np.sqrt(np.sum(np.abs(f - ref) ** 2) / np.sum(np.abs(ref) ** 2)))


def run_bempp(vertices, faces, k, theta):
    import numpy as np
    import bempp_cl.api as bempp
    import scipy.linalg

    grid = bempp.Grid(vertices.T.copy(), faces.T.copy())
    space = bempp.function_space(grid, "DP", 0)

    @bempp.complex_callable
    def minus_incident(x, n, domain_index, result):
        result[0] = -np.exp(1j * k * x[0])

    rhs = bempp.GridFunction(space, fun=minus_incident)
    slp = bempp.operators.boundary.helmholtz.single_layer(space, space, space, k)
    t0 = time.perf_counter()
    matrix = np.asarray(slp.weak_form().A)
    assembly = time.perf_counter() - t0
    t0 = time.perf_counter()
    coefficients = scipy.linalg.lu_solve(scipy.linalg.lu_factor(matrix), rhs.projections(space))
    solve = time.perf_counter() - t0
    phi = bempp.GridFunction(space, coefficients=coefficients)
    points = np.vstack([np.cos(theta), np.sin(theta), np.zeros_like(theta)])
    far = bempp.operators.far_field.helmholtz.single_layer(space, points, k).evaluate(phi)[0]
    return far, assembly, solve, matrix.shape[0]


def run_bem(bem, ply, k, threads):
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "v.csv")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        subprocess.run([bem, "validate", "--meshes", ply, "-k", str(k), "--csv", csv], check=True, env=env, stdout=subprocess.DEVNULL)
        with open(csv) as f:
            header, row = f.read().splitlines()[:2]
        return dict(zip(header.split(","), row.split(",")))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bem", required=True, help="path to the bem executable")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cases", default="all", help="all, or a comma list of case indices (0..3)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "..", "results"), help="output folder")
    args = parser.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = str(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import bempp_cl

    theta = np.linspace(0, np.pi, 181)
    chosen = range(len(CASES)) if args.cases == "all" else [int(c) for c in args.cases.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        # Warm-up: Numba compiles bempp-cl's kernels on first use; that time is not assembly.
        warm = os.path.join(tmp, "warm.ply")
        subprocess.run([args.bem, "sphere", "--kind", "ico", "--level", "1", "-o", warm], check=True, stdout=subprocess.DEVNULL)
        run_bempp(*read_ply_ascii(warm), 1.0, theta)
        rows = []
        for index in chosen:
            label, sphere_args, k = CASES[index]
            ply = os.path.join(tmp, f"case{index}.ply")
            subprocess.run([args.bem, "sphere", *sphere_args, "-o", ply], check=True, stdout=subprocess.DEVNULL)
            vertices, faces = read_ply_ascii(ply)
            reference = mie_far_field(k, theta)
            far, b_assembly, b_solve, n = run_bempp(vertices, faces, k, theta)
            ours = run_bem(args.bem, ply, k, args.threads)
            row = dict(case=label, triangles=int(len(faces)), wavenumber=k, mean_edge=float(ours["mean_edge"]),
                       elements_per_wavelength=float(ours["elements_per_wavelength"]),
                       bem_error=float(ours["far_field_error"]), bem_assembly_s=float(ours["assembly_s"]), bem_solve_s=float(ours["solve_s"]),
                       bempp_error=rel_l2(far, reference), bempp_assembly_s=b_assembly, bempp_solve_s=b_solve)
            print(json.dumps(row), flush=True)
            rows.append(row)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=os.path.dirname(__file__)).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    meta = dict(machine=f"{cpu}, {args.threads} threads (shared machine)", commit=commit,
                date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                bempp_cl=bempp_cl.__version__ if hasattr(bempp_cl, "__version__") else "0.4.2", rows=rows)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "bempp_comparison.json"), "w") as f:
        json.dump(meta, f, indent=2)
    with open(os.path.join(args.output, "bempp_comparison.md"), "w") as f:
        f.write(f"# bem vs bempp-cl {meta['bempp_cl']}: sound-soft unit sphere, P0, far field over 181 angles vs Mie\n\n")
        f.write(f"Machine: {meta['machine']}. Commit {commit}. Date {meta['date']}. Same mesh file for both codes; dense LU; "
                "bempp-cl's assembly timed after a Numba warm-up.\n\n")
        f.write("| mesh | triangles | k | el/wl | bem error | bempp-cl error | bem assembly s | bempp-cl assembly s | bem LU s | bempp-cl LU s |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['case']} | {r['triangles']} | {r['wavenumber']} | {r['elements_per_wavelength']:.1f} | {r['bem_error']:.3e} | "
                    f"{r['bempp_error']:.3e} | {r['bem_assembly_s']:.2f} | {r['bempp_assembly_s']:.2f} | {r['bem_solve_s']:.2f} | {r['bempp_solve_s']:.2f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
