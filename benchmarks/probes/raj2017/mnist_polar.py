"""Rotated MNIST (Raj et al. 2017, Table 2): LGIKA (RF) on the polar path with all 64 grid rotations, at a given D.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then.
Since then argparse reads its command line and its code runs under main(); the computation is unchanged.

LGIKA (RF) with D features (D / 2 templates, cos and sin) and all A = 64 grid rotations (the polar fast path), one
layer, the law and γ the 'reduced' run selected (uniform, γ factor 2), λ on the 2k validation split, refit on train
+ validation; prints one JSON line with the accuracy on the 50k regenerated test digits. Recorded command: python
mnist_polar.py 28000 (feature_s 330 s, total_s 951 s on a shared 2-core CPU; at D = 14000, mnist_polar14k.py, 134 s
and 642 s). Cited by results/raj2017/rotated_mnist_trials.json ("scripts", "runs"), which
docs/reproductions/raj2017.md renders.
"""
import argparse
import json, time, numpy as np
from orbitkernels.datasets import load_rotated_mnist
from orbitkernels.experiments import raj2017 as R
from orbitkernels.experiments._raj_eval import median_sq_dist, one_hot, holdout_select
from orbitkernels.experiments._common import RidgePath


def main(D):
    t0 = time.perf_counter()
    b = load_rotated_mnist(source="auto", random_state=0)
    X = np.concatenate([b.x_train, b.x_valid, b.x_test]).astype(np.float32)
    X = X.reshape(len(X), -1)
    y = np.concatenate([b.y_train, b.y_valid, b.y_test]).astype(int)
    n1, n2 = len(b.x_train), len(b.x_train) + len(b.x_valid)
    train, valid, test = np.arange(n1), np.arange(n1, n2), np.arange(n2, len(X))
    scale = median_sq_dist(X[train], seed=0)
    g = R.PolarRotation((28, 28), n_angles=64, angle=R._angle_law("uniform"))
    fm = R._image_feature_map("lgika_rf_polar", g, D, 2.0 / scale, 16, {}, 0).fit(X[train])
    F = fm.transform(X).astype(np.float32)
    t1 = time.perf_counter()
    lam = np.array(R._LAMBDAS); Y = one_hot(y, 10)
    acc = lambda P, Yv: float(np.mean(P.argmax(1) == Yv.argmax(1)))
    best, l, table = holdout_select({0: F}, Y, train, valid, lam, acc)
    fit = np.concatenate([train, valid])
    model = RidgePath([l]).fit(F[fit], Y[fit])
    P = np.concatenate([model.predict(F[test[a:a + 5000]])[0] for a in range(0, len(test), 5000)])
    rec = dict(method="lgika_rf_polar", D=D, polar_angles=64, law="uniform", gamma_factor=2.0, lam=l,
               accuracy=100 * float(np.mean(P.argmax(1) == y[test])), valid_acc=max(table["0"]),
               feature_s=round(t1 - t0, 1), total_s=round(time.perf_counter() - t0, 1), source=b.source)
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("D", type=int, help="number of features (28000 in the recorded run)")
    main(ap.parse_args().D)
