"""QM7, every outer fold (Raj et al. 2017, Table 1): LGIKA (RF) at D = 2000 and each fold's largest errors.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

LGIKA (RF), D = 2000, γ factor 1/64, λ by exact leave-one-out on the training folds, on each of the five outer folds:
the test RMSE / MAE, the five largest absolute errors, the RMSE without them, their share of the squared error and
the number of atoms of the worst molecule; one JSON line per fold, all of them written to probe_folds.json in the
current folder. Cited by results/raj2017/qm7_trials.json ("scripts", "commands", "fold_diagnostics"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import json, numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import LooRidge


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"])
    data = R._QM7(cfg, 0)
    y = data.T
    lam = 10.0 ** np.arange(-14, 1e-9, 0.5)
    out = []
    for k in range(5):
        train, test = data.split(k)
        F = data.features("lgika_rf", 2000, 1 / 64, train)
        m = LooRidge(lam).fit(F[train], y[train])
        err = m.predict(F[test]) - y[test]
        a = np.sort(np.abs(err))[::-1]
        rec = {"fold": k, "D": 2000, "factor": 1 / 64, "rmse": float(np.sqrt(np.mean(err ** 2))),
               "mae": float(np.mean(np.abs(err))),
               "max_abs_err": float(a[0]), "top5_abs_err": [round(float(v), 1) for v in a[:5]],
               "rmse_without_top5": float(np.sqrt(np.mean(a[5:] ** 2))),
               "share_of_sq_error_top5": float((a[:5] ** 2).sum() / (a ** 2).sum()),
               "n_atoms_of_worst": int((data.X[test[np.argmax(np.abs(err))]].reshape(23, 23).diagonal() > 0).sum())}
        print(json.dumps(rec), flush=True)
        out.append(rec)
    json.dump(out, open("probe_folds.json", "w"))  # the current folder


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
