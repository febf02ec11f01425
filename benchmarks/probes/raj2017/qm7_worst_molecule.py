"""Raj et al. 2017, Table 1: which molecule makes outer fold 1 the worst fold of every row, and what is each fold without it?

Every row of the QM7 reproduction has one outer fold far above the others (fold 1 of the recorded partition:
16.1 RMSE for the Sort-Coulomb exact kernel ridge, 11.9-12.5 on the other folds), and every random partition has
one such fold (``qm7_fold_seeds.py``). This probe recomputes the Sort-Coulomb exact kernel ridge row on each outer
fold exactly as the reproduction does (``raj2017._krr_loo``: γ factor and λ by exact leave-one-out on the training
folds, the training mean as constant mean, the "reduced" configuration's grids; the kernel every Sort-Coulomb row
approximates) and reports the fold's worst test molecule (its number of atoms, from the Coulomb matrix's non-zero
diagonal, its energy and its error) and the fold's RMSE without it. Run from the repository root (ORBITKERNELS_DATA
set): ``python benchmarks/probes/raj2017/qm7_worst_molecule.py [folds ...]`` (default 0-4; about a minute per fold
on one core); each fold is written at once to ``results/raj2017/qm7_worst_molecule_probes.json`` and skipped on a
rerun.
"""
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments.report import ProbeFile

OUT = Path("results/raj2017/qm7_worst_molecule_probes.json")
METHOD = "sort_krr"


def main(folds):
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/qm7_worst_molecule.py", experiment="qm7", method=METHOD,
                       fold_seed=0)
    cfg = dict(raj2017.CONFIGS["qm7"]["reduced"])
    data = raj2017._QM7(cfg, 0)
    X, y = data.Xs.astype(np.float64), data.T
    scale = data.scale["sort"]
    factors = raj2017._qm7_krr_factors(cfg, raj2017.as_method(METHOD))
    n_atoms = (np.abs(np.diagonal(data.X.reshape(len(X), 23, 23), axis1=1, axis2=2)) > 0).sum(1)

    def run(k):
        train, test = data.split(k)
        gram = lambda rows, cols, f: rbf_kernel(X[rows], X[cols], gamma=f / scale)  # noqa: E731
        best, lam, _, pred = raj2017._krr_loo(gram, factors, y, train, test, raj2017._qm7_lambdas(cfg))
        err = pred - y[test]
        i = int(np.argmax(np.abs(err)))
        rest = np.delete(err, i)
        return {"fold": k, "rmse": float(np.sqrt(np.mean(err ** 2))), "rmse_without_worst": float(np.sqrt(np.mean(rest ** 2))),
                "worst_atoms": int(n_atoms[test[i]]), "worst_energy": float(y[test[i]]), "worst_error": float(err[i]),
                "second_error": float(np.sort(np.abs(err))[-2]), "gamma_factor": best, "lambda": lam,
                "fewest_atoms_in_training": int(n_atoms[train].min())}

    for k in folds:
        probes.record(f"outer fold {k}", lambda k=k: run(k))


if __name__ == "__main__":
    with threadpool_limits(1):
        main([int(a) for a in sys.argv[1:]] or [0, 1, 2, 3, 4])
