#!/usr/bin/env bash
# The confirmation of the GEMM table as committed (gemm-offsets.sh with GEMM_OFFSETS_CONFIRM=1): the final
# rows of s and d against cuBLAS grouped with the tester's targets, the skewed batch, SYRK/SYR2K, c and z
# against 16 cuBLAS streams, ncu at x = 512. Writes $OUT/gemm-offsets/; TOPIC_BUDGET_S (default 80) s.
export GEMM_OFFSETS_CONFIRM=1 TOPIC_BUDGET_S=${TOPIC_BUDGET_S:-80}
exec bash "$(dirname "$0")/gemm-offsets.sh"
