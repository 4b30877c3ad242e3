#!/usr/bin/env bash
# first_call sweep: for each case, an empty cache then a populated one (fresh processes), and cuSOLVER.
# usage: run.sh FIRST_CALL_BINARY RUNNER LABEL  (RUNNER: the bundle's run script, sets LD_LIBRARY_PATH)
bin=$1; runner=$2; label=$3
for p in s d; do for n in 8 32 128; do for layout in column_major interleaved; do
  cache=$(mktemp -d)
  BATCHSOLVE_CACHE_DIR=$cache "$runner" "$bin" $p $n $layout 16384 | sed "s/^{/{\"build\": \"$label\", \"cache\": \"empty\", /"
  BATCHSOLVE_CACHE_DIR=$cache "$runner" "$bin" $p $n $layout 16384 | sed "s/^{/{\"build\": \"$label\", \"cache\": \"populated\", /"
  rm -rf "$cache"
  [[ $layout == column_major ]] && "$runner" "$bin" $p $n $layout 16384 --vendor | sed "s/^{/{\"build\": \"$label\", \"cache\": \"none\", /"
done; done; done
