"""Raj et al. 2017, Table 2: is LGIKA (RF)'s exact hyperkernel (97.12 % against the paper's 2nd layer, 97.18 %) short by more than the spread of the first layer's frequency draws?

The headline row ``lgika_rf_r100_qmc|14000`` (D = 14000, r = 100 low-variance rotations, the law and γ the
validation chose) gives 96.87 % with the frequencies of seed 0; ``iid_rotations.py`` drew the same row with seeds 1
and 2: 96.85 and 96.91 %. The row's 2nd layers rest on that one draw: the exact Gaussian hyperkernel on it
(``raj2017._image_hyper_cell``, the D₂ → ∞ limit of the 2nd RF layer; γ₂ factor and λ on the validation split,
refit on train + validation) gives 97.12 %, 0.06 below the paper's 97.18 %, i.e. 30 of the 50,000 test digits. This
probe computes the same two cells (first layer, hyperkernel on it) on the first layers of seeds 1 and 2, each
recomputed as ``iid_rotations.py`` drew it (its recorded first-layer accuracy is the control), then on seeds 3-8,
and stores the mean over the seeds with seed 0's recorded cells.

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/hyperkernel_seeds.py
--seeds 1 2`` (one seed per process lets two run side by side, ~29 minutes each on one core); each finished
variant is written at once to ``results/raj2017/hyperkernel_seeds_probes.json`` and skipped on a rerun.

Seeds 3-8 ran as ``--seeds 3 5 7 --time-budget 3500`` and ``--seeds 4 6 8 --time-budget 3500`` side by side (no new
seed starts after the budget; seeds 7 and 8 then ran as ``--seeds 7`` and ``--seeds 8``). BLAS runs on ``--threads``
threads (default 1: two seeds side by side on this machine's two cores; on a larger machine, its cores); each stage
prints its seconds as it ends. The summary adds the 95 %
Student-t interval of the mean over the seeds. Each variant records where its features ran (``raj2017.engine_options``)
and their seconds (``features_s``).
"""
import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.utils.io import read_json

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rmnist_lgika_row import RECORD, hyper_cell, lgika_map, lgika_row  # noqa: E402

OUT = Path("results/raj2017/hyperkernel_seeds_probes.json")
DRAWS = Path("results/raj2017/iid_rotations_probes.json")
SEED, DIM, R, ROW = 0, 14000, 100, "lgika_rf_r100_qmc"
PAPER_2ND_LAYER = 97.18
SUMMARY = "mean over the seeds (seed 0: the recorded cells)"


def first_layer_key(seed):
    return f"seed {seed}: first layer"


def hyper_key(seed):
    return f"seed {seed}: exact hyperkernel on it"


def summarise(probes):
    """The mean over seed 0 (the recorded cells) and the seeds run here that have both cells, and the spread."""
    v = probes.store["variants"]
    seeds = sorted({s for s in (int(m.group(1)) for m in map(re.compile(r"^seed (\d+): ").match, v) if m)
                    if first_layer_key(s) in v and hyper_key(s) in v})
    if not seeds:
        return
    cells = read_json(RECORD)["cells"]
    first = [cells[f"{ROW}|{DIM}"]["accuracy"]] + [v[first_layer_key(s)]["accuracy"] for s in seeds]
    hyper = [cells[f"hyper|{ROW}|{DIM}"]["accuracy"]] + [v[hyper_key(s)]["accuracy"] for s in seeds]
    probes.save(SUMMARY, {
        "seeds": [SEED] + seeds, "first_layer_mean": float(np.mean(first)), "first_layer_range": [min(first),
                                                                                                 max(first)],
        "accuracy": float(np.mean(hyper)), "hyper_range": [min(hyper), max(hyper)],
        "hyper_gain_mean": float(np.mean(np.subtract(hyper, first))), "paper": PAPER_2ND_LAYER,
        "seeds_at_or_above_paper": int(np.sum(np.round(hyper, 3) >= PAPER_2ND_LAYER)),
        "hyper_ci95": t_interval(hyper), "first_layer_ci95": t_interval(first)})


def t_interval(a):
    """The 95 % Student-t interval of the mean of ``a`` (None under three values)."""
    a = np.asarray(a, dtype=float)
    if len(a) < 3:
        return None
    half = float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))
    return [float(a.mean()) - half, float(a.mean()) + half]


def where():
    """Where the feature maps run (``raj2017.engine_options``), as recorded with each variant."""
    eng = raj2017.engine_options()
    return eng["backend"] + (f" {eng['device']}" if eng["device"] else "")


def first_layer(row, seed):
    """One seed's first layer on every row, drawn as ``iid_rotations.py`` drew its low-variance row of that seed (the
    same law, γ, r and frequencies), and the seconds it took."""
    t = time.perf_counter()
    fm = lgika_map(row, row.gamma, seed, DIM, R).fit(row.X[row.train])
    F = fm.transform(row.X).astype(np.float32)
    return F, round(time.perf_counter() - t, 1)


def layer1_cell(F, features_s, row, seed, drawn):
    """The RLS cell of ``first_layer``'s features ``F``; ``features_s``: their seconds (``seconds``: the RLS's)."""
    c = raj2017._classification_cell(F, row.y, row.train, row.valid, row.test, 10, {"layer2_dim": 0}, SEED)
    control = drawn.get(f"D={DIM}, r={R} low-variance (qmc), seed {seed}", {}).get("accuracy")
    return {"accuracy": c["accuracy"], "lambda": c["lambda"], "valid_acc": max(c["valid_acc"]["0"]),
            "iid_rotations_accuracy": control, "features": where(), "features_s": features_s}


def run_seed(probes, row, seed, drawn, progress=lambda what: None):
    """The two cells of one seed's first layer (:func:`first_layer`); ``drawn``: ``iid_rotations.py``'s variants,
    whose accuracy of the seed's first layer is the control; ``progress(what)`` after each stage."""
    if probes.has(first_layer_key(seed)) and probes.has(hyper_key(seed)):
        return
    F, features_s = first_layer(row, seed)
    progress(f"first layer's features ({where()}, {features_s} s)")

    probes.record(first_layer_key(seed), lambda: layer1_cell(F, features_s, row, seed, drawn))
    progress("first layer's RLS cell")
    probes.record(hyper_key(seed), lambda: {**hyper_cell(F, row, SEED), "features": where()})
    progress("exact hyperkernel cell")


def say(t0, what):
    """One line of progress: the seconds since ``t0`` and what just ended."""
    print(f"[{time.perf_counter() - t0:7.0f} s] {what}", flush=True)


def main(seeds, time_budget=float("inf")):
    t0 = time.perf_counter()
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/hyperkernel_seeds.py", experiment="rotated_mnist",
                       row=ROW, dim=DIM, r=R)
    row = lgika_row(SEED)
    say(t0, "the split and the row's law and γ")
    drawn = read_json(DRAWS)["variants"] if DRAWS.exists() else {}
    for seed in seeds:
        if time.perf_counter() - t0 > time_budget:
            print(f"time budget spent: seed {seed} and later not started", flush=True)
            break
        run_seed(probes, row, seed, drawn, lambda what, seed=seed: say(t0, f"seed {seed}: {what}"))
    summarise(probes)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--time-budget", type=float, default=float("inf"),
                    help="seconds after which no new seed starts (the finished cells are kept)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads for the ridge and kernel cells (default 1: two seeds side by side on 2 cores)")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error(f"--threads must be a positive integer; got {args.threads}")
    with threadpool_limits(args.threads):
        main(args.seeds, args.time_budget)
