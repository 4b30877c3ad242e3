#!/usr/bin/env bash
# The library's edges, checked by reading the sources (CTest layering.*):
#   check_includes.sh outside ROOT   no file outside libsolver/ includes a private header of the library
#                                    (one that resolves to libsolver/src/..., by a path into it or through
#                                    an include directory pointing there), and no CMake file outside
#                                    libsolver/ puts libsolver/src on an include path;
#   check_includes.sh core ROOT      the backend-independent layers (src/core, src/support, src/multi,
#                                    src/host) include no backend header (src/reference, src/cuda, src/stub):
#                                    they reach a backend only through core's dispatch (declare.hpp).
# ROOT is a checkout (or a copy of one). Prints every violation as FILE:LINE: text; exit 1 if any.
set -euo pipefail
mode=${1:?usage: check_includes.sh outside|core ROOT}
root=${2:?usage: check_includes.sh outside|core ROOT}
cd "$root"

# Files outside libsolver/ that may still include private headers, each with the reason (none left:
# tools/autotune reads batchsolve/limits.hpp).
allowed=()
is_allowed() {
  local f=$1 a
  for a in ${allowed[@]+"${allowed[@]}"}; do [[ $f == "$a" ]] && return 0; done  # empty-safe under set -u
  return 1
}

violations=0
report() { echo "$1"; violations=$((violations + 1)); }

# The quoted or angled path of each #include line of the given files: "FILE:LINE:PATH".
includes_of() {
  grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]+[">]' "$@" 2>/dev/null |
    sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]+)[">].*/\1:\2:\3/' || true
}

sources() {  # C/C++/CUDA sources below the given folders, without build trees and historical results
  find "$@" \( -name build -o -name 'build-*' -o -name results -o -name .git -o -name shared -o -name node_modules \) -prune -o \
    -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print
}

case $mode in
  outside)
    mapfile -t files < <(sources . | sed 's|^\./||' | grep -v '^libsolver/' | sort)
    while IFS=: read -r file line path; do
      [[ -z $file ]] && continue
      is_allowed "$file" && continue
      stripped=$path
      while [[ $stripped == ../* ]]; do stripped=${stripped#../}; done
      here=$(dirname "$file")
      if [[ $path == *libsolver/src/* ]]; then
        report "$file:$line: includes $path (a header under libsolver/src)"
      elif [[ -f "$here/$path" ]]; then
        continue  # the file's own neighbour
      elif [[ -f libsolver/src/$stripped || ( $stripped == src/* && -f libsolver/$stripped ) ]]; then
        report "$file:$line: includes $path (resolves to a header under libsolver/src)"
      fi
    done < <((( ${#files[@]} )) && includes_of "${files[@]}")
    # Include directories into the library's sources from outside it.
    while IFS=: read -r file line text; do
      [[ -z $file ]] && continue
      file=${file#./}
      is_allowed "$file" && continue
      [[ $text =~ ^[[:space:]]*# ]] && continue
      report "$file:$line: puts libsolver/src on an include path"
    done < <(find . \( -name build -o -name 'build-*' -o -name results -o -name .git -o -name shared -o -path ./libsolver \) -prune -o \
               -type f \( -name CMakeLists.txt -o -name '*.cmake' \) -print |
             xargs -r grep -HnE '(include_directories|INCLUDE_DIRECTORIES).*libsolver/src' || true)
    ;;
  core)
    [[ -d libsolver/src ]] || { echo "no libsolver/src under $root"; exit 2; }
    layers=()
    for d in core support multi host; do [[ -d libsolver/src/$d ]] && layers+=("libsolver/src/$d"); done
    mapfile -t files < <(sources "${layers[@]}" | sort)
    while IFS=: read -r file line path; do
      [[ -z $file ]] && continue
      # Resolve the path against the including file's folder (the layers include by relative paths).
      resolved=$(realpath -m --relative-to=. "$(dirname "$file")/$path")
      case $resolved in
        libsolver/src/reference/* | libsolver/src/cuda/* | libsolver/src/stub/*)
          report "$file:$line: includes $path (backend header $resolved)" ;;
      esac
      case $path in
        reference/* | cuda/jit/* | cuda/tuned/* | cuda/large/* | cuda/ldlt/* | cuda/blas3/* | cuda/triangular/* | stub/*)
          [[ -f libsolver/src/$path ]] && report "$file:$line: includes $path (backend header through an include path)" ;;
      esac
    done < <((( ${#files[@]} )) && includes_of "${files[@]}")
    ;;
  *) echo "usage: check_includes.sh outside|core ROOT"; exit 2 ;;
esac

if (( violations )); then
  echo "FAILED: $violations include(s) across the library's edges ($mode)"
  exit 1
fi
echo "ok: no include across the library's edges ($mode)"
