"""Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then."""
import sys, json, time
from orbitkernels.experiments import raj2017 as R
cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["lap_factors"] = [0.25, 1.0, 4.0, 16.0]
data = R._QM7(cfg, 0)
for m in sys.argv[1].split(','):
    t = time.time()
    out = R._qm7_krr_cell(data, m, 0)
    print(json.dumps({"method": m, "rmse": out["rmse"], "mae": out["mae"], "f": out["gamma_factor"], "lam": out["lambda"],
                      "loo": {k: min(v) for k, v in out["inner_cv_rmse"].items()}, "s": round(time.time()-t,1)}), flush=True)
