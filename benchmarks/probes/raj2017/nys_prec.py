"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.features import OrbitNystroem
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
