"""QM7 outer fold 0 (Raj et al. 2017, Table 1): LGIKA (Nys) with 2000 landmarks from the orbits, γ factors 1/64, 1/16.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

OrbitNystroem with landmarks="orbit" (landmarks moved by a Montavon permutation, r = 70), λ by exact leave-one-out
on the training folds; one JSON line per factor (the recorded run stopped after the first). Cited by
results/raj2017/qm7_trials.json ("scripts", "commands"), which docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time, numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import LooRidge, regression_scores
from orbitkernels.features import OrbitNystroem


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"])
    data = R._QM7(cfg, 0)
    y = data.T
    lam = 10.0 ** np.arange(-14, 1e-9, 0.5)
    train, test = data.split(0)
    for f in [1 / 64, 1 / 16]:
        t = time.perf_counter()
        fm = OrbitNystroem(data.group, kernel="rbf", gamma=f / data.scale["orig"], n_components=2000,
                           landmarks="orbit", n_group_samples=70, random_state=0)
        F = fm.fit(data.X[train]).transform(data.X).astype(np.float32)
        t1 = time.perf_counter()
        m = LooRidge(lam).fit(F[train], y[train]); s = regression_scores(m.predict(F[test]), y[test])
        print(json.dumps(dict(method="lgika_nys", landmarks="orbit", D=2000, factor=f, selection="loo",
                              lam=float(lam[m.best_]), loo_rmse=float(m.loo_rmse_.min()), rmse=s["rmse"],
                              mae=s["mae"], feat_s=round(t1 - t, 1), s=round(time.perf_counter() - t1, 1))),
              flush=True)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
