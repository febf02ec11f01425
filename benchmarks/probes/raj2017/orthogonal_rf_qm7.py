"""Raj et al. 2017, Table 1: do orthogonal random frequencies move the Sort-Coulomb (RF) row (12.89 RMSE in the paper)?

The row's features have no group (sorted Coulomb matrices, a Gaussian kernel), where orthogonal random features
(Yu et al. 2016; ``OrbitFourierFeatures(frequencies="orthogonal")``, the library's default for the Gaussian
kernel) halve the spread of the kernel estimate. This probe recomputes the row's cell (``raj2017._qm7_feature_cell``: D = 20000,
i.e. 10k frequencies with a cos and a sin, γ factor over the row's grid and λ by exact leave-one-out on the training
folds, the "reduced" configuration that made the recorded cells) on each outer fold with orthogonal frequencies,
everything else unchanged; the recorded i.i.d. cell of the same fold is set beside it. Run from the repository root
(ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/orthogonal_rf_qm7.py [folds ...]`` (default 0-4; about
four minutes a fold on one core); each fold is written at once to ``results/raj2017/orthogonal_rf_qm7_probes.json``
and skipped on a rerun.
"""
import argparse
import dataclasses
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.utils.io import read_json

OUT = Path("results/raj2017/orthogonal_rf_qm7_probes.json")
RECORD = Path("results/raj2017/qm7.json")
METHOD, DIM = "sort_rf", 20000


def main(folds):
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/orthogonal_rf_qm7.py", experiment="qm7", method=METHOD,
                       dim=DIM, fold_seed=0)
    cfg = dict(raj2017.CONFIGS["qm7"]["reduced"])
    data = raj2017._QM7(cfg, 0)
    cells = read_json(RECORD)["cells"]
    # its own name: the features' cache is keyed by the row's name, and the i.i.d. row must not be served
    row = dataclasses.replace(raj2017.METHODS[METHOD], name=f"{METHOD}_orthogonal", frequencies="orthogonal")
    factors = raj2017._qm7_gamma_grid(cfg, METHOD, DIM, None)

    def run(k):
        out = raj2017._qm7_feature_cell(data, row, DIM, k, None, factors=factors, layer2=False)
        rec = cells[f"{METHOD}|{DIM}|{k}"]
        return {"fold": k, "rmse": out["rmse"], "mae": out["mae"], "gamma_factor": out["gamma_factor"],
                "lambda": out["lambda"], "recorded_iid_rmse": rec["rmse"],
                "recorded_iid_gamma_factor": rec["gamma_factor"],
                "gamma_factors": factors}

    for k in folds:
        probes.record(f"outer fold {k}, orthogonal frequencies", lambda k=k: run(k))
    done = [v for v in probes.store["variants"].values() if "rmse" in v]
    if len(done) == 5:
        print("row (mean of the five folds' RMSE):", float(np.mean([v["rmse"] for v in done])),
              "recorded i.i.d. row:", float(np.mean([v["recorded_iid_rmse"] for v in done])))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folds", nargs="*", type=int, default=[0, 1, 2, 3, 4], help="outer folds (default: 0-4)")
    folds = ap.parse_args().folds
    with threadpool_limits(1):
        main(folds)
