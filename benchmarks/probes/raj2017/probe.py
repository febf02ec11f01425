"""QM7 outer fold 0 (Raj et al. 2017, Table 1): LGIKA (RF) at given r, D and γ factors, λ by 2-fold inner CV.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

Each argument r:D:factors (e.g. 70:2000:1/64,1/16) maps the molecules with r Montavon permutations and D features
at each γ factor (of the median squared distance), selects λ by 2-fold CV on the training folds ('inner_2fold') and
prints a JSON line per factor: the test RMSE / MAE and, for diagnosis, the best test RMSE over the λ grid. Cited by
results/raj2017/qm7_trials.json ("scripts", "commands", "runs"), which docs/reproductions/raj2017.md renders.
"""
import argparse
import time, json, numpy as np
from fractions import Fraction
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import inner_cv_select, regression_scores
from orbitkernels.experiments._common import RidgePath
from orbitkernels.features import OrbitFourierFeatures


def _spec(text):
    """r:D:factors as the recorded command lines write it (70:2000:1/64,1/16): (r, D, [factors])."""
    a, b, c = text.split(":")
    return int(a), int(b), [float(Fraction(f)) for f in c.split(",")]


def main(specs):
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["n_molecules"] = None
    data = R._QM7(cfg, 0)
    train, test = data.split(0)
    y = data.T
    lam = np.array(R._LAMBDAS)
    out = []
    for r, D, facs in specs:
        for f in facs:
            t0 = time.perf_counter()
            fm = OrbitFourierFeatures(data.group, gamma=f / data.scale["orig"], n_components=D // 2,
                                      n_group_samples=r, random_state=0)
            F = fm.fit(data.X[train]).transform(data.X).astype(np.float32)
            t1 = time.perf_counter()
            best, l, table = inner_cv_select({f: F}, y, train, lam, k=2, seed=0)
            t2 = time.perf_counter()
            pred = RidgePath([l]).fit(F[train], y[train]).predict(F[test])[0, :, 0]
            s = regression_scores(pred, y[test])
            # also oracle best lambda on test for reference
            P = RidgePath(lam).fit(F[train], y[train]).predict(F[test])[:, :, 0]
            orc = float(np.sqrt(((P - y[test][None]) ** 2).mean(1)).min())
            rec = dict(r=r, D=D, factor=f, lam=l, cv_rmse=float(min(table[str(f)])), rmse=s["rmse"], mae=s["mae"],
                       oracle_rmse=orc, feat_s=round(t1 - t0, 1), cv_s=round(t2 - t1, 1),
                       total_s=round(time.perf_counter() - t0, 1))
            print(json.dumps(rec), flush=True)
            out.append(rec)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="+", type=_spec, metavar="r:D:factors",
                    help="rotations r, features D and comma-separated γ factors, e.g. 70:2000:1/64,1/16")
    main(ap.parse_args().specs)
