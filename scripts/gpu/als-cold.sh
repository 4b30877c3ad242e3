#!/usr/bin/env bash
# als on one H200: the time to a model with the posv kernels compiled beside the run, then k = 128
# (column-major and chunked) and 256 (cuSOLVER and vbatched) per iteration, the engine's GPU tests
# (scripts/gpu/als.sh, ALS_MODE=cold, which says what each case is).
ALS_MODE=cold exec bash "$(dirname "$0")/als.sh"
