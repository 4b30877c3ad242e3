#!/usr/bin/env bash
# Writes libsolver/src/cuda/lazy_libraries.def: every function the toolkit's libcublas and libcusolver
# export, for the lazy trampolines of src/cuda/lazy_libraries.cpp.
#   libsolver/scripts/lazy_libraries_def.sh [CUDA_LIB_DIR (default /usr/local/cuda/lib64)]
set -euo pipefail
dir=${1:-/usr/local/cuda/lib64}
cublas=$(cd "$dir" && ls libcublas.so.[0-9]* | grep -E '^libcublas\.so\.[0-9]+$' | head -1)
cusolver=$(cd "$dir" && ls libcusolver.so.[0-9]* | grep -E '^libcusolver\.so\.[0-9]+$' | head -1)
out=$(dirname "$0")/../src/cuda/lazy_libraries.def
{
  echo "// Every function $cublas and $cusolver export, each defined as a lazy"
  echo "// trampoline by lazy_libraries.cpp: BS_LAZY_DECLARE(library, exported name). Regenerate for another"
  echo "// toolkit with libsolver/scripts/lazy_libraries_def.sh."
  for pair in "cublas:$cublas" "cusolver:$cusolver"; do
    lib=${pair%%:*} so=${pair#*:}
    nm -D --defined-only "$dir/$so" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | grep -E "^$lib" | sort -u |
      sed "s/^/BS_LAZY_DECLARE($lib, /; s/\$/)/"
  done
} > "$out"
echo "$out: $(grep -c BS_LAZY_DECLARE "$out") functions"
