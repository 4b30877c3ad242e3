#!/usr/bin/env bash
# Deeper k-slices and larger per-warp DMMA tiles beside the shipped GEMM entries, as a topic of its own (team
# calls pass no environment): gemm.sh's ktiles mode (the sweep at x = 512, 256, 128, s and d; the sweep's table
# against the committed one, each against cuBLAS grouped with its targets; SYRK/SYR2K; d with BATCHSOLVE_GEMM_TC_ROW=4 slices; ncu of d at x = 512).
# Writes $OUT/gemm/; TOPIC_BUDGET_S (default 100) s.
export GEMM_MODE=ktiles
exec bash "$(dirname "$0")/gemm.sh"
