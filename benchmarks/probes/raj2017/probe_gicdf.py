"""QM7 outer fold 0 (Raj et al. 2017, Table 1): GICDF with Gaussian or data templates, with and without normalisation.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

GICDF (25 bins) fitted on 8 Montavon permutations of 500 training molecules and averaged over 70, for 100 Gaussian
templates without input normalisation, 100 templates drawn from the data with and without it, and 200 Gaussian
templates; λ by exact leave-one-out on the training folds, one JSON line per variant. Cited by
results/raj2017/qm7_trials.json ("scripts", "commands"), which docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time
import numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.features import GroupCDFFeatures
from orbitkernels.experiments._raj_eval import loo_select, regression_scores


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["layer2_dim"] = 0
    data = R._QM7(cfg, 0)
    X, y = data.X, data.T
    train, test = data.split(0)
    group = data.group
    lambdas = R._qm7_lambdas(cfg)
    for m, sampling, norm in [(100, "gaussian", False), (100, "data", True), (100, "data", False),
                              (200, "gaussian", True)]:
        t = time.time()
        rng = np.random.RandomState(0); E = group.sample(70, rng)
        fit_rows = group.act(X[train[:500]], E[:8]).reshape(-1, X.shape[1])
        gic = GroupCDFFeatures(None, n_templates=m, n_bins=25, value_range="auto", template_sampling=sampling,
                               normalize=norm, random_state=0).fit(fit_rows)
        F = np.empty((len(X), m * 51), np.float32)
        for a in range(0, len(X), 64):
            Y = group.act(X[a:a+64], E)
            F[a:a+64] = gic.transform(Y.reshape(-1, X.shape[1])).reshape(70, -1, F.shape[1]).mean(0)
        best, lam, table, model = loo_select({None: lambda: F}, y, train, lambdas)
        pred = model.predict(F[test])
        print(json.dumps({"m": m, "sampling": sampling, "normalize": norm, **regression_scores(pred, y[test]),
                          "lam": lam, "s": round(time.time()-t,1)}), flush=True)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
