#!/usr/bin/env bash
# bem at scale only (about 40 s on one H200): scripts/gpu/bem.sh's device-resident runs, P1 n = 32,492
# soft and hard and P0 n = 32,000 / 64,980 with gpu-ldlt, written to $OUT/bem/ as bem.sh does.
cd "$(dirname "$0")/../.." && BEM_PART=scale exec bash scripts/gpu/bem.sh
