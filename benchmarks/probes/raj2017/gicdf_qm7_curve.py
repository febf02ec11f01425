"""Raj Table 1's GICDF row (12.25 RMSE) against the reproduction's 17.65: the curve over the number of templates.

The reproduction (``orbitkernels reproduce raj2017 --experiment qm7``, configuration ``reduced``) runs GICDF
(Mroueh et al. 2015) on the Coulomb matrices with 400 Gaussian templates and 25 bins (51 CDF values each, 20,400
features), pooled over r = 70 Montavon permutations applied to the data (``_gicdf_data_side``), then ridge with λ by
exact leave-one-out on the training folds. The paper does not state GICDF's number of templates (its RF rows use
10k). Earlier one-fold probes (``probe_gicdf.py``) gave 79.28 / 22.32 / 17.02 RMSE at 20 / 100 / 200 templates on
outer fold 0, and the row's own cell on that fold is 15.24 at 400. This probe continues the curve with the
reproduction's own cell (``_qm7_feature_cell``: same data, folds, seed, permutations, value range and λ selection;
first layer only) at 400 (the control: it must give the recorded cell), 800, 1600 and 3200 templates, to see
where the curve flattens and whether it reaches the paper's number. (After this probe the reproduction's row moved to
3200 templates, without a 2nd layer: 13.75 RMSE over the five folds; the control and the title keep the 400 it ran.)

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/gicdf_qm7_curve.py
[--folds K ...] [--templates M ...]`` (default: fold 0, every template count); each finished (templates, fold)
variant is written at once to ``results/raj2017/gicdf_qm7_probes.json`` and skipped on a rerun.
"""
import argparse
from pathlib import Path

from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments.report import ProbeFile

OUT = Path("results/raj2017/gicdf_qm7_probes.json")
TEMPLATES = [400, 800, 1600, 3200]  # 400: the reproduction's cell (the control)


def main(folds, templates):
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/gicdf_qm7_curve.py", experiment="qm7", method="gicdf",
                       bins=25, r=70, recorded_fold_rmse=[15.24, 25.48, 15.37, 16.50, 15.65],
                       recorded_row={"templates": 400, "rmse": 17.65, "paper_rmse": 12.25})
    for m in templates:
        if all(probes.has(f"templates={m} fold={k}") for k in folds):
            continue
        cfg = dict(raj2017.CONFIGS["qm7"]["reduced"], gicdf_templates=m, layer2_dim=0)
        data = raj2017._QM7(cfg, 0)

        def run(k, m=m, data=data):
            cell = raj2017._qm7_feature_cell(data, "gicdf", None, k, None, layer2=False)
            return {"templates": m, "fold": k, "n_features": m * (2 * cfg["gicdf_bins"] + 1), "rmse": cell["rmse"],
                    "mae": cell["mae"], "lambda": cell["lambda"]}

        for k in folds:
            probes.record(f"templates={m} fold={k}", lambda k=k: run(k))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", type=int, nargs="+", default=[0], help="outer folds (0-4)")
    ap.add_argument("--templates", type=int, nargs="+", default=TEMPLATES, help="numbers of templates")
    args = ap.parse_args()
    with threadpool_limits(1):
        main(args.folds, args.templates)
