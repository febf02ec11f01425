"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import time, json, sys, numpy as np
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import inner_cv_select, regression_scores
from orbitkernels.experiments._common import RidgePath
from orbitkernels.features import OrbitFourierFeatures
cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["n_molecules"] = None
data = R._QM7(cfg, 0)
train, test = data.split(0)
y = data.T
lam = np.array(R._LAMBDAS)
out = []
for r, D, facs in [(int(a), int(b), [float(eval(f)) for f in c.split(",")]) for a, b, c in (s.split(":") for s in sys.argv[1:])]:
    for f in facs:
        t0 = time.perf_counter()
        fm = OrbitFourierFeatures(data.group, gamma=f / data.scale["orig"], n_components=D // 2, n_group_samples=r, random_state=0)
        F = fm.fit(data.X[train]).transform(data.X).astype(np.float32)
        t1 = time.perf_counter()
        best, l, table = inner_cv_select({f: F}, y, train, lam, k=2, seed=0)
        t2 = time.perf_counter()
        pred = RidgePath([l]).fit(F[train], y[train]).predict(F[test])[0, :, 0]
        s = regression_scores(pred, y[test])
        # also oracle best lambda on test for reference
        P = RidgePath(lam).fit(F[train], y[train]).predict(F[test])[:, :, 0]
        orc = float(np.sqrt(((P - y[test][None]) ** 2).mean(1)).min())
        rec = dict(r=r, D=D, factor=f, lam=l, cv_rmse=float(min(table[str(f)])), rmse=s["rmse"], mae=s["mae"], oracle_rmse=orc,
                   feat_s=round(t1 - t0, 1), cv_s=round(t2 - t1, 1), total_s=round(time.perf_counter() - t0, 1))
        print(json.dumps(rec), flush=True)
        out.append(rec)
