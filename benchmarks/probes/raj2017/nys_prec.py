"""QM7: is float32 behind the Nyström rows' error? Original (Nys) Gram error against the exact Gaussian kernel.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

OrbitNystroem without a group (γ factor 1/16, 2500 landmarks from 3000 random molecules) fitted and applied in
float32 and in float64: max |F Fᵀ - K| and the mean diagonal of F Fᵀ on 200 random molecules, one line per
precision. Cited by results/raj2017/qm7_trials.json ("scripts", "commands", "precision_check"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.features import OrbitNystroem


def main():
    cfg = dict(R.CONFIGS["qm7"]["reduced"])
    data = R._QM7(cfg, 0)
    X = data.X
    rng = np.random.RandomState(0)
    tr = rng.choice(len(X), 3000, replace=False); ev = rng.choice(len(X), 200, replace=False)
    g = (1 / 16) / data.scale["orig"]
    for dt in (np.float32, np.float64):
        fm = OrbitNystroem(None, kernel="rbf", gamma=g, n_components=2500, random_state=0).fit(X[tr].astype(dt))
        F = fm.transform(X[ev].astype(dt)).astype(np.float64)
        from sklearn.metrics.pairwise import rbf_kernel
        K = rbf_kernel(X[ev].astype(np.float64), gamma=g)
        print(dt.__name__, "max |FF^T - K|", np.abs(F @ F.T - K).max(), "diag mean", np.mean(np.diag(F @ F.T)))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
