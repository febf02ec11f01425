"""Why Raj Table 1's Sort-Coulomb (Nys) row was 2 kcal/mol behind its exact kernel ridge: float32 kernel values.

The reproduction (``orbitkernels reproduce raj2017 --experiment qm7``) maps QM7's float32 Coulomb matrices with
``OrbitNystroem`` at 5700 landmarks, nearly every molecule of a training fold (5732). Under the wide Gaussians
that inner CV prefers (γ factor 1/64 of the median squared distance), K_ZZ is nearly singular (σ_min / σ_max
~ 1e-12) and L = K_ZZ^{-1/2} amplifies the float32 rounding of the kernel values into the features. This probe
maps outer fold 0 (train: the other four folds; test: fold 0) with the kernel values in float32 (``dtype=
"float32"``, what the library's ``dtype=None`` did on float32 rows before the fix) and with the library's
default now (``precision_``: float64 when the bound u · sqrt(s k_max / σ_min) passes 1e-3), and fits the
reproduction's ridge (exact leave-one-out λ on the training rows, the reproduction's λ grid). For comparison,
the exact kernel ridge (Sort-Coulomb exact KRR row) on this fold: LOO 13.56 at γ factor 1/64, test 12.50 at 1/256.

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/nys_precision.py``;
each finished variant is written at once to ``results/raj2017/nys_precision_probes.json`` and skipped on a rerun
(about 4 min per variant on one core).
"""
import argparse
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments._raj_eval import LooRidge
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.features import OrbitNystroem

OUT = Path("results/raj2017/nys_precision_probes.json")
SEED, FOLD, DIM = 0, 0, 5700
GRID = [(1 / 64, "float32"), (1 / 64, None), (1 / 16, "float32"), (1 / 16, None)]


def main():
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/nys_precision.py", experiment="qm7",
                       seed=SEED, fold=FOLD, landmarks=DIM, inputs="sorted Coulomb matrices (float32)")
    cfg = dict(raj2017.CONFIGS["qm7"]["reduced"])
    data = raj2017._QM7(cfg, SEED)
    train, test = data.split(FOLD)
    X, y = data.Xs, data.T
    lambdas = raj2017._qm7_lambdas(cfg)

    def run(factor, dtype):
        fm = OrbitNystroem(None, kernel="rbf", gamma=factor / data.scale["sort"], n_components=DIM,
                           random_state=SEED, dtype=dtype).fit(X[train])
        F = fm.transform(X)
        model = LooRidge(lambdas).fit(F[train], y[train])
        pred = model.predict(F[test])
        return {"gamma_factor": factor, "dtype": dtype or "None (default)",
                "kernel_precision": dtype or fm.precision_, "loo_rmse": float(model.loo_rmse_.min()),
                "lambda": float(lambdas[model.best_]), "test_rmse": float(np.sqrt(np.mean((pred - y[test]) ** 2)))}

    for factor, dtype in GRID:
        probes.record(f"f={factor:g} dtype={dtype or 'default'}", lambda f=factor, d=dtype: run(f, d))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
