"""Raj et al. 2017, Table 1, Sort-Coulomb exact kernel ridge: where along γ is the leave-one-out error lowest?

The row's cells chose γ = factor / (median squared distance of the sorted Coulomb matrices) over the factors
1/256 and 1/64 (the "sort" family's grid of the "reduced" configuration, narrowed by one-fold trials of the
random-feature rows at D = 2000), and picked an edge of it on every fold (1/256 on folds 0 and 2, 1/64 on the
others). This probe calls the cells' exact kernel ridge (``raj2017._krr_loo``: the Gaussian kernel
on the sorted matrices, the training mean held fixed, λ n over the configuration's λ grid, exact leave-one-out on
the training folds), one factor at a time, over factors 2^-10 ... 2^0 on each outer fold it is given, and records per factor the best
leave-one-out RMSE, its λ and the test fold's RMSE at that λ. The test column is for reading only: a cell sees the
leave-one-out column alone.

The Sort-Coulomb (RF) row at D = 20000 chose the top of its grid (1/256, 1/64, 1/16) on four folds of five, and
the Sort-Coulomb (Nys) row with 5700 landmarks the top of its (1/64, 1/16) on three. ``--rf`` and ``--nys`` compute
the row's first layer (``raj2017._qm7_feature_cell`` without the 2nd layer) at the next factor, 1/4, on each outer
fold given, beside the recorded cell: the leave-one-out error a grid extended to 1/4 would compare, and the test
RMSE it would then report.

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/qm7_sort_krr_grid.py
[folds ...] [--rf | --nys]`` (default 0 1; about 35 s per factor and fold on one core, a minute per fold with
``--rf``, eight with ``--nys``); each fold is written at once to ``results/raj2017/qm7_sort_krr_grid_probes.json``
and skipped on a rerun.
"""
import argparse
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.utils.io import read_json

OUT = Path("results/raj2017/qm7_sort_krr_grid_probes.json")
FACTORS = [2.0 ** -e for e in range(10, -1, -1)]
RECORD = Path("results/raj2017/qm7.json")
NEXT_FACTOR = 0.25
EARLIER_GRID = [1 / 256, 1 / 64]  # the row's grid before this probe (the cells' choices it recorded)
#: the feature rows ``--rf`` and ``--nys`` probe: (label, method, D)
ROWS = {"--rf": ("Sort-Coulomb (RF), D=20000", "sort_rf", 20000),
        "--nys": ("Sort-Coulomb (Nys), D=5700", "sort_nys", 5700)}


def main(folds, row=None):
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/qm7_sort_krr_grid.py", experiment="qm7", method="sort_krr",
                       factors=FACTORS, earlier_grid=EARLIER_GRID)
    cfg = dict(raj2017.CONFIGS["qm7"]["reduced"])
    data = raj2017._QM7(cfg, 0)
    y = data.T
    gram = raj2017._qm7_krr_gram(data, raj2017.as_method("sort_krr"))  # the cells' own kernel
    lambdas = raj2017._qm7_lambdas(cfg)

    def run(k):
        train, test = data.split(k)
        loo, lam, rmse = [], [], []
        for f in FACTORS:  # the cells' own kernel ridge, one factor at a time (its λ by leave-one-out)
            _, best_lam, table, pred = raj2017._krr_loo(gram, [f], y, train, test, lambdas)
            loo.append(float(table[f].min()))
            lam.append(best_lam)
            rmse.append(float(np.sqrt(np.mean((pred - y[test]) ** 2))))
        best = int(np.argmin(loo))
        earlier = min((FACTORS.index(f) for f in EARLIER_GRID), key=lambda i: loo[i])
        return {"fold": k, "loo_rmse": [round(v, 4) for v in loo], "lambda": lam, "test_rmse": [round(v, 4) for v in rmse],
                "loo_choice": FACTORS[best], "test_rmse_at_loo_choice": rmse[best],
                "loo_choice_in_earlier_grid": FACTORS[earlier], "test_rmse_in_earlier_grid": rmse[earlier]}

    def run_row(k, method, dim):
        recorded = read_json(RECORD)["cells"][f"{method}|{dim}|{k}"]
        chosen = recorded["gamma_factor"]
        out = raj2017._qm7_feature_cell(data, method, dim, k, None, factors=[NEXT_FACTOR], layer2=False)
        loo_next = min(out["inner_cv_rmse"][str(NEXT_FACTOR)])
        return {"fold": k, "recorded_factor": chosen, "recorded_loo_rmse": min(recorded["inner_cv_rmse"][str(chosen)]),
                "recorded_test_rmse": recorded["rmse"], "loo_rmse_at_1/4": loo_next, "lambda_at_1/4": out["lambda"],
                "test_rmse_at_1/4": out["rmse"],
                "extended_grid_choice": NEXT_FACTOR if loo_next < min(recorded["inner_cv_rmse"][str(chosen)]) else chosen}

    for k in folds:
        if row is None:
            probes.record(f"outer fold {k}", lambda k=k: run(k))
        else:
            label, method, dim = ROWS[row]
            probes.record(f"{label}, factor 1/4: outer fold {k}", lambda k=k: run_row(k, method, dim))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folds", nargs="*", type=int, default=[0, 1], help="outer folds (default: 0 1)")
    one = ap.add_mutually_exclusive_group()
    for flag, (label, _, _) in ROWS.items():
        one.add_argument(flag, dest="row", action="store_const", const=flag, help=f"{label} at factor 1/4")
    args = ap.parse_intermixed_args()  # folds and the flag in any order
    with threadpool_limits(1):
        main(args.folds, row=args.row)
