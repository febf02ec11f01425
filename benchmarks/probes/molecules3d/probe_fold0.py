"""Fold-0 probe of the 3-D molecular orbit features on QM7 (picks the representation for the 5-fold runs).

Usage: python benchmarks/probes/molecules3d/probe_fold0.py [n_train] [configs as JSON list]
Train on the first n_train molecules of the training folds of fold 0 (generated folds, seed 0), test on all of
fold 0; λ by exact leave-one-out of RidgePath on the training rows, γ over a grid (the test RMSE at the γ
that LOO picks is printed, with the best-on-test for reference). Prints one JSON line per configuration.
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


def main(n_train=2000, configs=({},)):
    b = load_qm7(n_folds=5, random_state=0)
    X = encode_molecules(b.Z, b.R).astype(np.float32)
    train, test = qm7_fold_indices(b, 0)
    train = np.random.RandomState(0).permutation(train)[:n_train]
    for cfg in configs:
        cfg = dict(cfg)
        gammas = cfg.pop("gammas", [0.01, 0.03, 0.1, 0.3, 1.0])
        reflections = cfg.pop("reflections", False)
        t0 = time.perf_counter()
        # i.i.d. frequencies: the draw the recorded variants were made with
        fmap = MolecularOrbitFeatures(Rotation3D(reflections=reflections), random_state=0, max_memory_mb=512,
                                      frequencies="iid", **cfg)
        fmap.fit(X[train])
        idx = np.concatenate([train, test])
        Fs = fmap.transform_gammas(X[idx], gammas)
        t_feat = time.perf_counter() - t0
        res = []
        for g in gammas:
            F = Fs[g]
            path = RidgePath(alphas).fit(F[:n_train], b.T[train])
            loo = [float(np.sqrt(np.mean(path.loo_residuals(i) ** 2))) for i in range(len(alphas))]
            i = int(np.argmin(loo))
            err = path.predict(F[n_train:], i)[:, 0] - b.T[test]
            res.append({"gamma": g, "loo": round(min(loo), 3), "alpha": float(alphas[i]),
                        "rmse": round(float(np.sqrt(np.mean(err ** 2))), 3),
                        "mae": round(float(np.abs(err).mean()), 3)})
        best = min(res, key=lambda r: r["loo"])
        print(json.dumps({"config": cfg, "reflections": reflections, "n_train": n_train, "feature_s": round(t_feat, 1),
                          "chosen": best, "all": res}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n_train", nargs="?", type=int, default=2000,
                    help="training molecules, the first of fold 0's training folds (default: 2000)")
    ap.add_argument("configs", nargs="?", type=json.loads, default=[{}],
                    help="a JSON list of MolecularOrbitFeatures parameters, each may add 'gammas' and 'reflections' "
                         "(default: [{}], the defaults)")
    args = ap.parse_args()
    main(args.n_train, args.configs)
