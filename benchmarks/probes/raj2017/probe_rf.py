"""QM7 (Raj et al. 2017, Table 1): the LGIKA (RF) cell at a given D and fixed γ factor on given outer folds.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

The reproduction's feature cell (raj2017._qm7_feature_cell) for LGIKA (RF) with r = 70, γ fixed (not selected), λ by
leave-one-out on the training folds and no 2nd layer, on each fold given (comma-separated); one JSON line per fold
(42-128 s a fold at D = 20000 in the recorded runs, "five_fold_probes"). Recorded commands: python probe_rf.py 20000
1/16 1,0,2,3,4 (and 1/8). Cited by results/raj2017/qm7_trials.json ("scripts", "commands"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time
from fractions import Fraction
from orbitkernels.experiments import raj2017 as R


def main(dim, f, folds):
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["layer2_dim"] = 0
    data = R._QM7(cfg, 0)
    for k in folds:
        t = time.time()
        out = R._qm7_feature_cell(data, "lgika_rf", dim, k, f)
        print(json.dumps({"D": dim, "f": f, "fold": k, "rmse": out["rmse"], "mae": out["mae"], "lam": out["lambda"],
                          "loo": min(min(v) for v in out["inner_cv_rmse"].values()), "s": round(time.time()-t,1)}),
              flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dim", type=int, help="number of features D")
    ap.add_argument("factor", type=lambda v: float(Fraction(v)), help="γ factor, e.g. 1/16")
    ap.add_argument("folds", type=lambda s: [int(v) for v in s.split(",")],
                    help="comma-separated outer folds, e.g. 1,0,2")
    args = ap.parse_args()
    main(args.dim, args.factor, args.folds)
