"""Why does the 2nd RF layer hurt on QM7 here while it helps in Raj et al. (2017, Table 1: −0.77 RMSE)?

Probe on outer fold 0 of the generated 5-fold split (the protocol of ``orbitkernels reproduce raj2017
--experiment qm7``): LGIKA (RF) first layer, Montavon-sampled permutations (r = 70), γ₁ = factor / median
squared distance; the 2nd layer is Gaussian random Fourier features of the first layer's features with
γ₂ = factor₂ / median squared distance of the training rows (as ``_raj_eval.second_layer``). Varied: the
2nd layer's width D₂, γ₂, and what it sees / what the ridge sees: ``plain`` (2nd layer only, the
reproduction's row), ``standardised`` (first-layer features scaled to unit variance before the 2nd layer),
``concat`` (ridge on [layer 1, layer 2]). λ by exact leave-one-out (``RidgePath``) on the training rows.

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/raj2017/layer2_width.py``;
each finished variant is written at once to ``results/raj2017/layer2_probes.json`` and skipped on a rerun.
``--d1 20000`` repeats the question at the reproduction's first-layer width (its variants are keyed
``d1=20000 ...``): the first layer alone and a second layer twice as wide with γ₂ factor 1/16, plain and
concatenated; ``--fold k`` runs it on outer fold k (keys ``fold=k ...``; fold 0 is the default) so that the
five folds give a mean comparable with the paper's row.
"""
import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.kernel_approximation import RBFSampler
from threadpoolctl import threadpool_limits

from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.datasets import load_qm7
from orbitkernels.groups import CoulombPermutation
from orbitkernels.models.ridge import RidgePath
from orbitkernels.experiments.report import ProbeFile

OUT = Path("results/raj2017/layer2_probes.json")
SEED, FOLD, R = 0, 0, 70
D1, GAMMA1 = 4000, 1 / 8                   # a first layer of the reproduction's family (γ₁ chosen at D = 20000: 1/8–1/4)
WIDTHS = [2000, 4000]
FACTORS2 = [1 / 16, 1 / 4, 1.0, 4.0]
MODES = ["plain", "standardised", "concat"]
# then, cheapest questions first: wider than the first layer, and a smaller γ₂
EXTRA = [(16000, 1 / 16, "plain"), (4000, 1 / 64, "plain"), (16000, 1 / 64, "plain"), (4000, 1 / 64, "concat"),
         (16000, 1 / 16, "concat")]
LAMBDAS = 10.0 ** np.arange(-14, 0.01, 0.5)  # λ n ||w||², the reproduction's grid


def median_sq_dist(X, n=1000, seed=0):
    idx = np.random.RandomState(seed).choice(len(X), min(n, len(X)), replace=False)
    A = np.asarray(X[idx], dtype=np.float64)
    sq = (A * A).sum(1)
    D = sq[:, None] + sq[None, :] - 2 * A @ A.T
    return float(np.median(D[np.triu_indices(len(A), 1)]))


def loo_fit(F, y, train, test):
    path = RidgePath(LAMBDAS * len(train)).fit(F[train], y[train])
    loo = [float(np.sqrt(np.mean(path.loo_residuals(i) ** 2))) for i in range(len(LAMBDAS))]
    best = int(np.argmin(loo))
    err = path.predict(F[test], best)[:, 0] - y[test]
    return dict(lam=float(LAMBDAS[best]), loo_rmse=loo[best], rmse=float(np.sqrt(np.mean(err ** 2))),
                mae=float(np.mean(np.abs(err))), lam_at_grid_edge=best in (0, len(LAMBDAS) - 1))


def main(d1=D1, fold=FOLD):
    wide = d1 != D1
    tag = (f"fold={fold} " if fold != FOLD else "") + (f"d1={d1} " if wide else "")
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/layer2_width.py", experiment="qm7",
                       fold=FOLD, seed=SEED, r=R, d1=D1, gamma1_factor=GAMMA1)
    bunch = load_qm7(n_folds=5, random_state=0)
    X = bunch.X.reshape(len(bunch.X), -1).astype(np.float32)
    y = bunch.T
    test = np.asarray(bunch.folds[fold])
    train = np.sort(np.concatenate([f for i, f in enumerate(bunch.folds) if i != fold]))
    t0 = time.perf_counter()
    group = CoulombPermutation(23, sampling="montavon", noise=1.0)
    F1 = OrbitFourierFeatures(group, sampling="iid", gamma=GAMMA1 / median_sq_dist(X, seed=SEED),
                              n_components=d1 // 2, n_group_samples=R,
                              random_state=SEED).fit(X[train]).transform(X).astype(np.float32)
    probes.store[f"{tag}layer1_seconds".replace(" ", "_")] = round(time.perf_counter() - t0, 1)

    record = probes.record

    record(f"{tag}layer1", lambda: loo_fit(F1, y, train, test))
    sd = F1[train].std(axis=0)
    F1s = (F1 - F1[train].mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    def run(d2, f2, mode):
        base = F1s if mode == "standardised" else F1
        g2 = f2 / max(median_sq_dist(base[train], seed=SEED), 1e-300)
        F2 = RBFSampler(gamma=g2, n_components=d2, random_state=SEED).fit(base[train]).transform(base)
        F2 = F2.astype(np.float32)
        if mode == "concat":
            F2 = np.hstack([F1, F2])
        return loo_fit(F2, y, train, test)

    grid = [(d2, f2, mode) for d2 in WIDTHS for f2 in FACTORS2 for mode in MODES] + EXTRA
    if wide:
        grid = [(2 * d1, 1 / 16, "plain")] + ([(2 * d1, 1 / 16, "concat")] if fold == FOLD else [])
    elif fold != FOLD:
        grid = []
    for d2, f2, mode in grid:
        record(f"{tag}d2={d2} f2={f2:g} {mode}", lambda: run(d2, f2, mode))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d1", type=int, default=D1, help="first-layer width (default the probe's 4000)")
    ap.add_argument("--fold", type=int, nargs="+", default=[FOLD], help="outer folds (default 0)")
    args = ap.parse_args()
    with threadpool_limits(1):
        for k in args.fold:
            main(args.d1, k)
