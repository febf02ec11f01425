"""QM7 outer fold 0 (Raj et al. 2017, Table 1, beyond the paper): LGIKA (RF) with the Laplacian base kernel.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

D features with Cauchy frequencies (r = 70 Montavon permutations; with "sort", the sorted Coulomb matrices without a
group) at each γ factor given (of the median L1 distance), λ by exact leave-one-out on the training folds; one JSON
line per factor (48-61 s each at D = 4000 in the recorded run, "beyond_paper_probes"). Recorded command:
python probe_laprf.py 4000 1/16,1/4,1. Cited by results/raj2017/qm7_trials.json ("scripts", "commands"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time
from fractions import Fraction
import numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import loo_select, regression_scores
from orbitkernels.features import OrbitFourierFeatures


def main(D, factors, sort=False):
    cfg = dict(R.CONFIGS["qm7"]["reduced"])
    data = R._QM7(cfg, 0)
    train, test = data.split(0)
    lambdas = R._qm7_lambdas(cfg)
    for f in factors:
        t = time.time()
        fm = OrbitFourierFeatures(None if sort else data.group, kernel="laplacian", gamma=f / data.scale_l1,
                                  n_components=D // 2, n_group_samples=None if sort else 70, random_state=0)
        X = data.Xs if sort else data.X
        F = fm.fit(X[train]).transform(X).astype(np.float32)
        best, lam, table, model = loo_select({f: lambda: F}, data.T, train, lambdas)
        pred = model.predict(F[test])
        print(json.dumps({"method": "sort_rf_lap" if sort else "lgika_rf_lap", "D": D, "factor": f, "fold": 0,
                          "lam": lam, "loo_rmse": float(min(table[f] if f in table else list(table.values())[0])),
                          **regression_scores(pred, data.T[test]), "s": round(time.time() - t, 1)}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("D", type=int, help="number of features (n_components = D // 2 frequencies)")
    ap.add_argument("factors", type=lambda s: [float(Fraction(v)) for v in s.split(",")],
                    help="comma-separated γ factors, e.g. 1/16,1/4,1")
    ap.add_argument("sort", nargs="?", choices=["sort"], help="the sorted Coulomb matrices, no group (Sort-Coulomb)")
    args = ap.parse_args()
    main(args.D, args.factors, sort=args.sort == "sort")
