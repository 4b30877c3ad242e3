#!/usr/bin/env bash
# als on one H200: the two-level solve (2 x 2 blocks through the generated kernels of half the width)
# beside the defaults at k = 256 and 128, k = 64 cold time to model, the engine's GPU tests
# (scripts/gpu/als.sh, ALS_MODE=solve, which says what each case is).
ALS_MODE=solve exec bash "$(dirname "$0")/als.sh"
