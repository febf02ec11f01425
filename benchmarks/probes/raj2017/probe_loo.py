"""QM7 outer fold 0 (Raj et al. 2017, Table 1): LGIKA (RF) at given r, D and γ factor, λ by exact leave-one-out.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

Each argument r:D:factor (e.g. 70:4000:1/16; r = 0: no group, Original RF) maps the molecules with r Montavon
permutations and D features, selects λ by exact leave-one-out on the training folds ('loo', the selection the
"reduced" configuration uses) and prints a JSON line: the test RMSE / MAE and, for diagnosis, the best test RMSE over
the λ grid. Cited by results/raj2017/qm7_trials.json ("scripts", "commands", "runs"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import time, json, numpy as np
from fractions import Fraction
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import LooRidge, regression_scores
from orbitkernels.features import OrbitFourierFeatures


def _spec(text):
    """r:D:factor as the recorded command lines write it (70:4000:1/16): (r, D, factor)."""
    r, D, f = text.split(":")
    return int(r), int(D), float(Fraction(f))


def main(specs):
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["n_molecules"] = None
    data = R._QM7(cfg, 0)
    train, test = data.split(0)
    y = data.T
    lam = 10.0 ** np.arange(-14, 0.01, 0.5)
    for r, D, f in specs:
        t0 = time.perf_counter()
        g = data.group if r > 0 else None
        fm = OrbitFourierFeatures(g, gamma=f / data.scale["orig"], n_components=D // 2,
                                  n_group_samples=r if g else None, random_state=0)
        F = fm.fit(data.X[train]).transform(data.X).astype(np.float32)
        t1 = time.perf_counter()
        m = LooRidge(lam).fit(F[train], y[train])
        t2 = time.perf_counter()
        s = regression_scores(m.predict(F[test]), y[test])
        orc = min(regression_scores(m.predict(F[test], i), y[test])["rmse"] for i in range(len(lam)))
        print(json.dumps(dict(r=r, D=D, factor=f, lam=float(lam[m.best_]), loo_rmse=float(m.loo_rmse_.min()),
                              rmse=s["rmse"], mae=s["mae"], oracle_rmse=orc, feat_s=round(t1 - t0, 1),
                              loo_fit_s=round(t2 - t1, 1), total_s=round(time.perf_counter() - t0, 1))), flush=True)
        del F, m


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="+", type=_spec, metavar="r:D:factor",
                    help="rotations r (0: no group), features D and a γ factor, e.g. 70:4000:1/16")
    main(ap.parse_args().specs)
