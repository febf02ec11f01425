"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import sys, json, time
from orbitkernels.experiments import raj2017 as R
cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["layer2_dim"] = 0
data = R._QM7(cfg, 0)
method, dim, f = sys.argv[1], int(sys.argv[2]), float(eval(sys.argv[3]))
for k in [int(v) for v in sys.argv[4].split(',')]:
    t = time.time()
    out = R._qm7_feature_cell(data, method, dim, k, f)
    print(json.dumps({"method": method, "D": dim, "factor": f, "fold": k, "rmse": out["rmse"], "mae": out["mae"],
                      "lam": out["lambda"], "s": round(time.time() - t, 1)}), flush=True)
