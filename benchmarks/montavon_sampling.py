"""Montavon et al.'s noisy sorting of Coulomb matrices: i.i.d. noise against a randomised lattice.

    ORBITKERNELS_DATA=/path/to/data python benchmarks/montavon_sampling.py

Writes ``results/sampling/montavon.json``. The group element of Montavon's sampling
(``CoulombPermutation(23, sampling="montavon")``, used by the QM7 rows of Raj et al.'s
Table 1) is a vector of 23 Gaussian noises added to the sorted row norms; the permutation it
induces depends on the molecule. This measures the error of the orbit embedding's group
average (Raj et al. 2017, Eq. 7 without the 1/sqrt(s)), ‖ψ_r(x) − ψ(x)‖ / ‖ψ(x)‖ against a
2048-element i.i.d. average with the same frequencies, for the noise drawn i.i.d. (today's
sampler) and from a randomly shifted rank-1 lattice through the normal inverse CDF
(:func:`orbitkernels.groups.base.unit_points`, what ``sampling="qmc"`` does for other laws):
200 QM7 molecules, γ = 1/16 of 1/median‖x‖², 200 frequencies, 5 seeds.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

from orbitkernels import __version__
from orbitkernels.datasets import load_qm7
from orbitkernels.groups import CoulombPermutation
from orbitkernels.groups.base import unit_points
from orbitkernels.utils.io import atomic_write_json


def group_average(group, X, W, E, block=128):
    acc = np.zeros((len(X), 2 * len(W)))
    for a in range(0, len(E), block):
        S = group.act(X, E[a : a + block]) @ W.T
        acc += np.concatenate([np.cos(S).sum(0), np.sin(S).sum(0)], axis=1)
    return acc / len(E)


def main():
    t0 = time.time()
    q = load_qm7(download=False)
    X = np.asarray(q.X, dtype=np.float64).reshape(len(q.X), -1)[:200]
    group = CoulombPermutation(23, sampling="montavon", noise=1.0)
    gamma = (1 / 16) / float(np.median((X**2).sum(1)))
    rows, errors = [], {}
    for seed in range(5):
        rng = np.random.default_rng(seed)
        W = rng.normal(scale=np.sqrt(2 * gamma), size=(200, X.shape[1]))
        ref = group_average(group, X, W, group.sample(2048, 10_000 + seed))
        for r in (8, 16, 32, 70):
            E_iid = group.sample(r, seed)
            E_qmc = norm.ppf(unit_points(r, 23, np.random.default_rng(seed))) * group.noise
            for name, E in (("iid", E_iid), ("lattice", E_qmc)):
                est = group_average(group, X, W, E)
                err = float(np.mean(np.linalg.norm(est - ref, axis=1) / np.linalg.norm(ref, axis=1)))
                errors.setdefault((r, name), []).append(err)
    for (r, name), errs in sorted(errors.items()):
        row = dict(r=r, sampling=name, error=float(np.mean(errs)), error_std=float(np.std(errs)))
        print(json.dumps(row))
        rows.append(row)
    out = Path("results") / "sampling" / "montavon.json"
    atomic_write_json(out, dict(version=__version__, command="python benchmarks/montavon_sampling.py",
                                n_molecules=len(X), n_frequencies=200, n_ref=2048, seeds=5, rows=rows,
                                wall_seconds=time.time() - t0))
    print(f"wrote {out}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
