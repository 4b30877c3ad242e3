#!/usr/bin/env bash
# The GEMM designs side by side, as a topic of its own (team calls pass no environment): gemm.sh's designs
# mode (the committed tiles beside the register path with element pointers advanced per slice on larger
# tiles, d also on the 16x8x8 DMMA form, dmma16 1; the sweep's table against the committed one, each against cuBLAS
# grouped with its targets; SYRK/SYR2K, the skewed batch, c and z). Writes $OUT/gemm/; TOPIC_BUDGET_S
# (default 150) s.
export GEMM_MODE=designs
exec bash "$(dirname "$0")/gemm.sh"
