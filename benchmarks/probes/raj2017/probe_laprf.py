"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import sys, json, time
import numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import loo_select, regression_scores
from orbitkernels.features import OrbitFourierFeatures
cfg = dict(R.CONFIGS["qm7"]["reduced"])
data = R._QM7(cfg, 0)
train, test = data.split(0)
lambdas = R._qm7_lambdas(cfg)
D = int(sys.argv[1]); sort = len(sys.argv) > 3 and sys.argv[3] == "sort"
for f in [float(eval(v)) for v in sys.argv[2].split(',')]:
    t = time.time()
    fm = OrbitFourierFeatures(None if sort else data.group, kernel="laplacian", gamma=f / data.scale_l1,
                              n_components=D // 2, n_group_samples=None if sort else 70, random_state=0)
    X = data.Xs if sort else data.X
    F = fm.fit(X[train]).transform(X).astype(np.float32)
    best, lam, table, model = loo_select({f: lambda: F}, data.T, train, lambdas)
    pred = model.predict(F[test])
    print(json.dumps({"method": "sort_rf_lap" if sort else "lgika_rf_lap", "D": D, "factor": f, "fold": 0, "lam": lam,
                      "loo_rmse": float(min(table[f] if f in table else list(table.values())[0])),
                      **regression_scores(pred, data.T[test]), "s": round(time.time() - t, 1)}), flush=True)
