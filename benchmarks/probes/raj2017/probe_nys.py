"""QM7 (Raj et al. 2017, Table 1): a Nyström row's cell at a given D and γ factor on given outer folds, no 2nd layer.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

The reproduction's feature cell (raj2017._qm7_feature_cell) for a method (e.g. lgika_nys), D landmarks and a γ
factor, λ by leave-one-out on the training folds, on each fold given (comma-separated); one JSON line per fold.
Recorded commands: python probe_nys.py lgika_nys 5000 1/16 0 (and 1/4): a training fold has 5732 molecules, so the
paper's 10000 data landmarks are refused. Cited by results/raj2017/qm7_trials.json ("scripts", "commands"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time
from fractions import Fraction
from orbitkernels.experiments import raj2017 as R


def main(method, dim, f, folds):
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["layer2_dim"] = 0
    data = R._QM7(cfg, 0)
    for k in folds:
        t = time.time()
        out = R._qm7_feature_cell(data, method, dim, k, f)
        print(json.dumps({"method": method, "D": dim, "factor": f, "fold": k, "rmse": out["rmse"], "mae": out["mae"],
                          "lam": out["lambda"], "s": round(time.time() - t, 1)}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("method", help="the cell's method, e.g. lgika_nys")
    ap.add_argument("dim", type=int, help="number of landmarks D")
    ap.add_argument("factor", type=lambda v: float(Fraction(v)), help="γ factor, e.g. 1/16")
    ap.add_argument("folds", type=lambda s: [int(v) for v in s.split(",")], help="comma-separated outer folds, e.g. 0")
    args = ap.parse_args()
    main(args.method, args.dim, args.factor, args.folds)
