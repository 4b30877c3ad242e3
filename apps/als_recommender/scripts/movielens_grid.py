#!/usr/bin/env python3
"""ml-latest-small, explicit ALS-WR: the lambda x k grid on an 80/20 random split, with and without
biases, beside the global-mean and damped-bias baselines, all through the `als` command line
(import, split, train, evaluate). Writes OUT/movielens_grid.json and prints a markdown table.

usage: movielens_grid.py --als BUILD/apps/als_recommender/als --data ../shared/data/ratings/ml-latest-small
                         --work DIR [--seed 42 --iterations 15 --factors 8,16,32,64 --lambdas 0.02,0.05,0.1,0.2]"""
import argparse
import json
import os
import re
import subprocess


def run(als, args):
    out = subprocess.run([als] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"als {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--als", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--seed", default="42")
    p.add_argument("--iterations", default="15")
    p.add_argument("--factors", default="8,16,32,64")
    p.add_argument("--lambdas", default="0.02,0.05,0.1,0.2")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    w = lambda name: os.path.join(a.work, name)  # noqa: E731
    print(run(a.als, ["import", "-i", os.path.join(a.data, "ratings.csv"), "-o", w("ml.h5"), "--force"]).strip())
    print(run(a.als, ["split", "-i", w("ml.h5"), "--train", w("ml_train.h5"), "--test", w("ml_test.h5"),
                      "--test-fraction", "0.2", "--seed", a.seed, "--force"]).strip())
    rows = []
    baselines = None
    for biases in (True, False):
        for k in a.factors.split(","):
            for lam in a.lambdas.split(","):
                args = ["train", "--train", w("ml_train.h5"), "-o", w("m.h5"), "--factors", k, "--lambda", lam,
                        "--iterations", a.iterations, "--seed", a.seed, "--backend", "cpu", "--force", "--eval-every", "0"]
                if biases:
                    args.append("--biases")
                run(a.als, args)
                ev = w("ev.json")
                run(a.als, ["evaluate", "-m", w("m.h5"), "--test", w("ml_test.h5"), "--train", w("ml_train.h5"), "--json", ev])
                j = json.load(open(ev))
                baselines = {"global_mean": j["global_mean"], "biases": j["biases"]}
                rows.append({"biases": biases, "factors": int(k), "lambda": float(lam), **j["model"]})
                print(f"biases {biases!s:5} k {k:>3} lambda {lam:>5}: RMSE {j['model']['rmse']:.4f} MAE {j['model']['mae']:.4f}",
                      flush=True)
    best = min(rows, key=lambda r: r["rmse"])
    doc = {"dataset": "ml-latest-small ratings.csv", "split": f"random 80/20 per rating, seed {a.seed}",
           "iterations": int(a.iterations), "rows": rows, "baselines": baselines, "best": best}
    with open(w("movielens_grid.json"), "w") as f:
        json.dump(doc, f, indent=2)
    print(f"\nbest: biases {best['biases']}, k {best['factors']}, lambda {best['lambda']}: RMSE {best['rmse']:.4f}")
    print(f"global mean RMSE {baselines['global_mean']['rmse']:.4f}, user+item biases RMSE {baselines['biases']['rmse']:.4f}")


if __name__ == "__main__":
    main()
