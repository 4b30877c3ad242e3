#!/usr/bin/env bash
# The leaf diagonal kernel's potrf_large designs alone (large.sh's leaf-d and leaf-s steps: d and s at
# n = 8192, 4096, 2048 beside the table and cuSOLVER Xpotrf), as a team-call topic of its own.
LARGE_LEAF_ONLY=1 TOPIC_BUDGET_S=${TOPIC_BUDGET_S:-22} exec bash "$(dirname "$0")/large.sh" "$@"
