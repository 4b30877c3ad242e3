#!/usr/bin/env bash
# large-vendor-graph.sh's confirmation of the adopted table (LVG_CONFIRM=1: the shipped table alone,
# TOPIC_BUDGET_S 70 by default); writes $OUT/large-vendor-graph/ as that script does.
export LVG_CONFIRM=1 TOPIC_BUDGET_S=${TOPIC_BUDGET_S:-70}
exec bash "$(dirname "$0")/large-vendor-graph.sh"
