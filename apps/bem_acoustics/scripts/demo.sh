#!/usr/bin/env bash
# The README's BEM demo (< 30 s on 2 cores): a plane wave on the sound-soft unit sphere (icosphere of
# 1,280 triangles, k = 2, P0), assembled and solved on the GPU when one is present, else on the CPU;
# prints the far-field error against the Mie series.   usage: demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
bem=$build/apps/bem_acoustics/bem
out=$build/demo/bem
assembly=cpu solver=cpu-lu
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then assembly=gpu solver=gpu-lu; fi
echo "bem demo: sound-soft unit sphere, k = 2, P0, assembly on $assembly, solver $solver"
"$bem" solve --mesh ico:3 --wavenumber 2 --mie-radius 1 --assembly "$assembly" --solver "$solver" --angles 361 \
  --grid plane=xy,extent=3,n=61 --output-dir "$out" --force
echo "bem demo: results in $out (surface.h5, surface_f0.vtu, far_field_f0.csv, grid_f0.h5/.vtk)"
