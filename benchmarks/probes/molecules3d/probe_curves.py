"""Where the 3-D orbit features stop on QM7: fold-0 curves against training size and number of rotations.

Usage: python benchmarks/probes/molecules3d/probe_curves.py > results/molecules3d/curves_fold0.json
Atom-centred densities (σ = 0.7 Å, cutoff 2 Å, Gaussian base kernel, γ = 0.3, M = 32 wavevectors, 256 templates
per species), fold 0 of the generated folds (seed 0), λ by exact leave-one-out of RidgePath on the training rows.
(1) RMSE against the number of training molecules at r = 32 rotations; (2) RMSE against r at 2000 training
molecules, with the features' relative change under a random rotation of the test molecules (the sampling noise
of the orbit average).
"""
import argparse
import json
import time

import numpy as np

from orbitkernels.datasets.qm7 import load_qm7, qm7_fold_indices
from orbitkernels.features.molecular import MolecularOrbitFeatures
from orbitkernels.groups.rotation3d import Rotation3D, encode_molecules
from orbitkernels.models.ridge import RidgePath

alphas = np.logspace(-8, 2, 21)
kw = dict(centres="atoms", sigma=0.7, cutoff=2.0, gamma=0.3, n_wavevectors=32, n_components=256, random_state=0,
          max_memory_mb=512, frequencies="iid")  # the draw the recorded curves were made with


def score(F_train, y_train, F_test, y_test):
    path = RidgePath(alphas).fit(F_train, y_train)
    loo = [np.sqrt(np.mean(path.loo_residuals(i) ** 2)) for i in range(len(alphas))]
    err = path.predict(F_test, int(np.argmin(loo)))[:, 0] - y_test
    return round(float(np.sqrt(np.mean(err ** 2))), 3), round(float(np.abs(err).mean()), 3)


def main():
    b = load_qm7(n_folds=5, random_state=0)
    X = encode_molecules(b.Z, b.R).astype(np.float32)
    train, test = qm7_fold_indices(b, 0)
    order = np.random.RandomState(0).permutation(train)
    out = {"settings": {k: v for k, v in kw.items() if k != "max_memory_mb"}, "train_size": [], "rotations": []}
    rows = np.concatenate([order, test])
    t0 = time.perf_counter()
    F = MolecularOrbitFeatures(n_group_samples=32, **kw).fit(X[order]).transform(X[rows])
    feat_s = time.perf_counter() - t0
    n = len(order)
    for m in (500, 1000, 2000, 4000, n):
        rmse, mae = score(F[:m], b.T[order[:m]], F[n:], b.T[test])
        out["train_size"].append({"n_train": int(m), "r": 32, "rmse": rmse, "mae": mae})
        print(json.dumps(out["train_size"][-1]), flush=True)
    out["train_size_feature_seconds"] = round(feat_s, 1)
    sub = np.concatenate([order[:2000], test])
    g = Rotation3D()
    Xrot = g.act_each(X[test], g.sample(len(test), 7))
    for r in (8, 16, 32, 64):
        fm = MolecularOrbitFeatures(n_group_samples=r, **kw).fit(X[order[:2000]])
        t0 = time.perf_counter()
        F = fm.transform(X[sub])
        sec = time.perf_counter() - t0
        Fr = fm.transform(Xrot)
        change = float(np.linalg.norm(Fr - F[2000:]) / np.linalg.norm(F[2000:]))
        rmse, mae = score(F[:2000], b.T[order[:2000]], F[2000:], b.T[test])
        rmse_rot = score(F[:2000], b.T[order[:2000]], Fr, b.T[test])[0]
        out["rotations"].append({"n_train": 2000, "r": r, "rmse": rmse, "mae": mae, "rmse_rotated_test": rmse_rot,
                                 "relative_feature_change_under_rotation": round(change, 4),
                                 "ms_per_molecule": round(1e3 * sec / len(sub), 3)})
        print(json.dumps(out["rotations"][-1]), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
