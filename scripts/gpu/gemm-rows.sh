#!/usr/bin/env bash
# d's tensor-core slice rows per size class (the GEMM table's tc_row) and the cp.async ring with element
# pointers advanced per slice, as a topic of its own (team calls pass no environment): gemm.sh's rows mode,
# side by side in one run against cuBLAS grouped at x = 512..32, s and d: the shipped table (per-class rows;
# targets.json), d with rows 4 in every class, d with rows 8 in every class, the ring table for the classes
# 256 and above (scripts/gpu/gemm-rows-ring.json; targets-ring.json), a sweep of
# scripts/gpu/gemm-rows-candidates.json at x = 512, 256; then TRSM's two algorithms per order (kernels
# compiled first). Writes $OUT/gemm/; TOPIC_BUDGET_S (default 170) s.
export GEMM_MODE=rows
exec bash "$(dirname "$0")/gemm.sh"
