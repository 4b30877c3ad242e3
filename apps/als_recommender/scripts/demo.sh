#!/usr/bin/env bash
# The ALS recommender's demo (scripts/setup.sh demo calls it): a generated implicit rating set with a
# planted low-rank signal, split 80/20, 8 iterations of implicit ALS (the GPU when present, else the
# CPU), then P@10/MAP@10/NDCG@10/AUC on the held-out interactions beside item popularity, and three
# recommendations. A few seconds on 2 cores.   usage: demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
als=$build/apps/als_recommender/als
dir=$build/demo/als
mkdir -p "$dir"
"$als" generate -o "$dir/ratings.h5" --users 3000 --items 1000 --interactions 90000 --rank 8 --seed 1 --force
"$als" split -i "$dir/ratings.h5" --train "$dir/train.h5" --test "$dir/test.h5" --seed 2 --force
"$als" train --train "$dir/train.h5" --test "$dir/test.h5" -o "$dir/model.h5" --factors 16 --lambda 10 \
    --iterations 8 --eval-every 4 --seed 3 --backend auto --force
"$als" evaluate -m "$dir/model.h5" --test "$dir/test.h5"
"$als" recommend -m "$dir/model.h5" --users u0 --n 3
