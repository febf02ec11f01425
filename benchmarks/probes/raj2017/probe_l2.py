"""QM7 outer fold 0 (Raj et al. 2017, Table 1): Sort / Original (RF) over γ factors, and LGIKA (RF) with a 2nd layer.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

Sort-Coulomb and Original (RF) at D = 2000 for γ factors 1/64, 1/16, 1/4 and 1, then LGIKA (RF) at D = 4000
(factor 1/16) alone and with a 2nd RF layer of 4000 features at factors 0.25, 1 and 4; λ by exact leave-one-out on
the training folds, one JSON line per fit. Cited by results/raj2017/qm7_trials.json ("scripts", "commands"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import time, json, numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import LooRidge, regression_scores, second_layer


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["n_molecules"] = None
    data = R._QM7(cfg, 0)
    train, test = data.split(0)
    y = data.T
    lam = 10.0 ** np.arange(-14, 0.01, 0.5)
    def fit(F, tag):
        t = time.perf_counter(); m = LooRidge(lam).fit(F[train], y[train])
        s = regression_scores(m.predict(F[test]), y[test])
        print(json.dumps(dict(tag=tag, lam=float(lam[m.best_]), loo_rmse=float(m.loo_rmse_.min()), rmse=s["rmse"],
                              mae=s["mae"], s=round(time.perf_counter()-t,1))), flush=True)
    for meth in ["sort_rf", "orig_rf"]:
        for f in [1/64, 1/16, 1/4, 1.0]:
            fit(data.features(meth, 2000, f, train), f"{meth} D=2000 f={f}")
    F = data.features("lgika_rf", 4000, 1/16, train)
    fit(F, "lgika_rf D=4000 f=1/16")
    for f2 in [0.25, 1.0, 4.0]:
        fit(second_layer(F, train, 4000, f2, 0), f"lgika_rf D=4000 L2=4000 f2={f2}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
