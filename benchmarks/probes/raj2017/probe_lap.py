"""QM7 outer fold 0 (Raj et al. 2017, Table 1, beyond the paper): exact kernel ridge with the Laplacian kernel.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

The reproduction's exact kernel ridge cell (raj2017._qm7_krr_cell) for each method given (e.g.
sort_krr_lap,orig_krr_lap), γ factors 0.25, 1, 4, 16 of the median L1 distance, γ and λ by exact leave-one-out on the
training folds; one JSON line per method (sort_krr_lap took 189 s in the recorded run, "beyond_paper_probes"). Cited
by results/raj2017/qm7_trials.json ("scripts", "commands"), which docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time
from orbitkernels.experiments import raj2017 as R


def main(methods):
    cfg = dict(R.CONFIGS["qm7"]["reduced"]); cfg["lap_factors"] = [0.25, 1.0, 4.0, 16.0]
    data = R._QM7(cfg, 0)
    for m in methods:
        t = time.time()
        out = R._qm7_krr_cell(data, m, 0)
        print(json.dumps({"method": m, "rmse": out["rmse"], "mae": out["mae"], "f": out["gamma_factor"],
                          "lam": out["lambda"], "loo": {k: min(v) for k, v in out["inner_cv_rmse"].items()},
                          "s": round(time.time()-t,1)}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("methods", type=lambda s: s.split(","),
                    help="comma-separated methods, e.g. sort_krr_lap,orig_krr_lap")
    main(ap.parse_args().methods)
