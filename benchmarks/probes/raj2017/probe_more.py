"""QM7 outer fold 0 (Raj et al. 2017, Table 1): the Nyström rows over γ factors and GICDF with 20 and 100 templates.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

Sort-Coulomb (Nys) at γ factors 1/64, 1/4, 1 and LGIKA (Nys) at 1/16, 1/4, 1 (D = 2000), then GICDF on the data side
with 20 and 100 templates; λ by exact leave-one-out on the training folds, one JSON line per fit. Made after the main
run; cited by results/raj2017/qm7_trials.json ("scripts", "commands"), which docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time, numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import LooRidge, regression_scores


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"])
    data = R._QM7(cfg, 0)
    y = data.T
    lam = 10.0 ** np.arange(-14, 1e-9, 0.5)
    train, test = data.split(0)
    def fit(F, **rec):
        t = time.perf_counter()
        m = LooRidge(lam).fit(F[train], y[train]); s = regression_scores(m.predict(F[test]), y[test])
        rec.update(selection="loo", lam=float(lam[m.best_]), loo_rmse=float(m.loo_rmse_.min()), rmse=s["rmse"],
                   mae=s["mae"], s=round(time.perf_counter() - t, 1))
        print(json.dumps(rec), flush=True)
    for meth in ["sort_nys", "lgika_nys"]:
        for f in [1 / 64, 1 / 4, 1.0] if meth == "sort_nys" else [1 / 16, 1 / 4, 1.0]:
            t = time.perf_counter(); F = data.features(meth, 2000, f, train)
            fit(F, method=meth, D=2000, factor=f, feat_s=round(time.perf_counter() - t, 1))
    for m_ in [20, 100]:
        t = time.perf_counter(); F = R._gicdf_data_side(data.X, train, data.group, 70, m_, 25, 0)
        fit(F, method="gicdf", templates=m_, D=F.shape[1], feat_s=round(time.perf_counter() - t, 1))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
