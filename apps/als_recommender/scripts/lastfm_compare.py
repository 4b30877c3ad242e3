#!/usr/bin/env python3
"""Last.fm 2k, implicit feedback: our ALS beside `implicit`'s ALS on the same 80/20 split
(implicit.evaluation.train_test_split(0.8, random_state=SEED)) with the same hyperparameters, every
model scored by implicit.evaluation.ranking_metrics_at_k (P@10, MAP@10, NDCG@10, AUC@10) and by
`als evaluate` (the same P/MAP/NDCG definitions, full AUC), plus item popularity.

usage: lastfm_compare.py --als BUILD/apps/als_recommender/als --data ../shared/data/ratings/hetrec2011-lastfm-2k
                         --work DIR [--factors 64 --iterations 15 --lambda 0.01 --alpha 1 --seeds 42,1,2]
Writes DIR/lastfm_compare.json and prints a markdown table."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import als_h5  # noqa: E402


def load_lastfm(path):
    users, items, plays = [], [], []
    with open(path) as f:
        next(f)
        for line in f:
            u, a, w = line.split("\t")
            users.append(u), items.append(a), plays.append(float(w))
    uid = {u: i for i, u in enumerate(dict.fromkeys(users))}
    iid = {a: i for i, a in enumerate(dict.fromkeys(items))}
    m = sp.csr_matrix((np.array(plays, np.float32), ([uid[u] for u in users], [iid[a] for a in items])),
                      shape=(len(uid), len(iid)))
    m.sum_duplicates()
    return m, list(uid), list(iid)


def metrics_of(user_factors, item_factors, train, test, k=10):
    from implicit.cpu.als import AlternatingLeastSquares
    model = AlternatingLeastSquares(factors=user_factors.shape[1])
    model.user_factors = np.ascontiguousarray(user_factors, dtype=np.float32)
    model.item_factors = np.ascontiguousarray(item_factors, dtype=np.float32)
    from implicit.evaluation import ranking_metrics_at_k
    return ranking_metrics_at_k(model, train, test, K=k, show_progress=False)


def run_als(args, cmd):
    out = subprocess.run([args.als] + cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"als {' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--als", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--factors", type=int, default=64)
    p.add_argument("--iterations", type=int, default=15)
    p.add_argument("--lambda", dest="lam", type=float, default=0.01)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--seeds", default="42")
    p.add_argument("--backend", default="cpu")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    import implicit
    from implicit.evaluation import train_test_split
    from implicit.cpu.als import AlternatingLeastSquares

    full, users, items = load_lastfm(os.path.join(a.data, "user_artists.dat"))
    rows = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        train, test = train_test_split(full, 0.8, random_state=seed)
        train, test = sp.csr_matrix(train), sp.csr_matrix(test)
        tr_path, te_path = os.path.join(a.work, f"lastfm_train_{seed}.h5"), os.path.join(a.work, f"lastfm_test_{seed}.h5")
        prov = f"Last.fm 2k user_artists.dat, implicit.evaluation.train_test_split(0.8, random_state={seed})"
        als_h5.write_ratings(tr_path, train, users, items, "implicit", prov + " (train)")
        als_h5.write_ratings(te_path, test, users, items, "implicit", prov + " (test)")

        def record(name, uf, itf, seconds, our_eval=None):
            m = metrics_of(uf, itf, train, test)
            row = {"seed": seed, "model": name, "seconds": seconds,
                   "implicit_eval": {k: float(v) for k, v in m.items()}}
            if our_eval is not None:
                row["als_eval"] = our_eval
            rows.append(row)
            print(f"seed {seed} {name:44s} P@10 {m['precision']:.4f} MAP@10 {m['map']:.4f} NDCG@10 {m['ndcg']:.4f} "
                  f"AUC@10 {m['auc']:.4f}  ({seconds:.1f} s)", flush=True)

        # Ours: confidence 1 + alpha r, exact solves.
        model_path = os.path.join(a.work, f"lastfm_model_{seed}.h5")
        t0 = time.time()
        run_als(a, ["train", "--train", tr_path, "-o", model_path, "--factors", str(a.factors), "--iterations",
                    str(a.iterations), "--lambda", str(a.lam), "--alpha", str(a.alpha), "--seed", str(seed),
                    "--backend", a.backend, "--force", "--no-loss", "--eval-every", "0"])
        seconds = time.time() - t0
        ev_json = os.path.join(a.work, f"lastfm_eval_{seed}.json")
        run_als(a, ["evaluate", "-m", model_path, "--test", te_path, "--json", ev_json])
        with open(ev_json) as f:
            ours_eval = json.load(f)
        uf, itf = als_h5.read_model_factors(model_path)
        record(f"ours ALS exact ({a.backend}), c = 1 + alpha r", uf, itf, seconds, ours_eval["model"])
        rows.append({"seed": seed, "model": "popularity (als evaluate)", "als_eval": ours_eval["popularity"]})

        # implicit's CPU ALS, its own confidence c = alpha r (the default) and ours (data 1 + alpha r, alpha 1).
        for label, data, alpha in (("implicit CPU ALS (CG), c = alpha r", train, a.alpha),
                                   ("implicit CPU ALS (CG), c = 1 + alpha r", None, 1.0),
                                   ("implicit CPU ALS (Cholesky), c = alpha r", train, a.alpha)):
            x = train.copy()
            if data is None:
                x.data = 1 + a.alpha * x.data
            m = AlternatingLeastSquares(factors=a.factors, regularization=a.lam, alpha=alpha, iterations=a.iterations,
                                        random_state=seed, use_cg="CG" in label)
            t0 = time.time()
            m.fit(x, show_progress=False)
            record(label, m.user_factors, m.item_factors, time.time() - t0)
    out = {"dataset": "hetrec2011-lastfm-2k", "factors": a.factors, "iterations": a.iterations, "lambda": a.lam,
           "alpha": a.alpha, "implicit_version": implicit.__version__, "rows": rows}
    with open(os.path.join(a.work, "lastfm_compare.json"), "w") as f:
        json.dump(out, f, indent=2)
    print("\n| seed | model | P@10 | MAP@10 | NDCG@10 | AUC@10 (implicit) | AUC (full, als) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ie, ae = r.get("implicit_eval"), r.get("als_eval")
        src = ie if ie else ae
        print(f"| {r['seed']} | {r['model']} | {src['precision']:.4f} | {src['map']:.4f} | {src['ndcg']:.4f} | "
              f"{ie['auc']:.4f} | " if ie else f"| {r['seed']} | {r['model']} | {src['precision']:.4f} | {src['map']:.4f} | "
              f"{src['ndcg']:.4f} | - | ", end="")
        print(f"{ae['auc']:.4f} |" if ae else "- |")


if __name__ == "__main__":
    main()
