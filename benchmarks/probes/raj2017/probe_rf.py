"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import sys, json, time
from orbitkernels.experiments import raj2017 as R
dim = int(sys.argv[1]); f = float(eval(sys.argv[2])); folds = [int(k) for k in sys.argv[3].split(',')]
cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["layer2_dim"] = 0
data = R._QM7(cfg, 0)
for k in folds:
    t = time.time()
    out = R._qm7_feature_cell(data, "lgika_rf", dim, k, f)
    print(json.dumps({"D": dim, "f": f, "fold": k, "rmse": out["rmse"], "mae": out["mae"], "lam": out["lambda"],
                      "loo": min(min(v) for v in out["inner_cv_rmse"].values()), "s": round(time.time()-t,1)}), flush=True)
