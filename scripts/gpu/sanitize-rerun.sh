#!/usr/bin/env bash
# sanitize.sh for what the first call of 2026-12-02 left timed out or reported (posv_mixed, the BLAS-3
# families through their GPU tests, large POTF2 racecheck, ALS racecheck) and the jobs reworked since;
# the same table, under $OUT/sanitize. Budget TOPIC_BUDGET_S.
cd "$(dirname "$0")/../.." || exit 1
export SANITIZE_ONLY=${SANITIZE_ONLY:-'refinement|ALS|large POTF2|large recursive|gemm_vbatched|syrk|herk|symm'}
export SANITIZE_BUDGET_S=${TOPIC_BUDGET_S:-150} JOBS=${JOBS:-16}
exec scripts/gpu/sanitize.sh
