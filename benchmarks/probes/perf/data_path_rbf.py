"""Probe: OrbitNystroem's data-side Gaussian, as one product on the back-end against scikit-learn's pairwise kernel.

On the data side (a data-dependent action such as Montavon et al.'s noisy sortings of QM7's Coulomb matrices, Raj
et al. 2017 §4.1) every row is moved by the r sampled elements and compared with the landmarks: k(g_k x, z) =
exp(-γ|g_k x - z|²). The engine's ``DataPath`` computes -|g x - z|²/2 as one product of the moved rows, with two
more columns (-1, -|g x|²/2), against the landmarks with (|z|²/2, 1), then the exponential in place, on the
back-end and in the compute precision; before, scikit-learn's ``rbf_kernel`` of the moved rows ran in float64 on
the host whatever the back-end. Both ways run here on the same fitted map (the former by turning the path's
product form off), on QM7-shaped data: Coulomb matrices of 23 atoms (d = 529), r = 70 Montavon sortings (the
paper's configuration), ``--landmarks`` orbit landmarks, ``--rows`` molecules; it reports the transform's time
for each (best of ``--repeat``), their ratio, and the largest difference of the features relative to their
largest entry, for the back-end, device and compute precision (``--dtype``: the estimator's ``dtype``) asked for.
Usage::

    python benchmarks/probes/perf/data_path_rbf.py [--backend torch --device cuda] [--dtype float32] [--rows 2000]
    python benchmarks/probes/perf/data_path_rbf.py --automatic-precision   # the precision the map picks by itself

Adds its run to ``--out`` (default ``results/bench/data_path_rbf_probe.json``) under "backend/device/dtype".
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from orbitkernels.features import OrbitNystroem
from orbitkernels.groups import CoulombPermutation


def coulomb_like(n, rng, n_atoms=23):
    """n symmetric 23 x 23 Coulomb-shaped matrices (diagonal 0.5 Z^2.4, off-diagonal Z_i Z_j / |R_i - R_j|)."""
    out = np.zeros((n, n_atoms, n_atoms))
    for i in range(n):
        k = rng.integers(5, n_atoms + 1)
        Z = rng.choice([1.0, 6.0, 7.0, 8.0, 16.0], size=k, p=[0.5, 0.3, 0.08, 0.1, 0.02])
        R = rng.normal(scale=1.5, size=(k, 3))
        D = np.linalg.norm(R[:, None] - R[None], axis=-1) + np.eye(k)
        C = np.outer(Z, Z) / D
        C[np.diag_indices(k)] = 0.5 * Z**2.4
        out[i, :k, :k] = C
    return out.reshape(n, -1)


def time_transform(est, X, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        F = est.transform(X)
        best = min(best, time.perf_counter() - t0)
    return F, best


def setup(rows, landmarks, r):
    """The probe's rows, group and OrbitNystroem parameters (γ from the median squared distance of 200 rows)."""
    X = coulomb_like(rows, np.random.default_rng(0))
    gamma = 1.0 / np.median(((X[:200, None] - X[None, :200]) ** 2).sum(-1))
    kw = dict(kernel="rbf", gamma=gamma, n_components=landmarks, landmarks="orbit", n_group_samples=r, random_state=0)
    return X, CoulombPermutation(23, sampling="montavon", noise=1.0), kw


def main(rows, landmarks, r, backend, device, dtype, repeat, out):
    X, group, kw = setup(rows, landmarks, r)
    kw.update(backend=backend, device=device, dtype=dtype)
    new = OrbitNystroem(group, **kw).fit(X)
    old = OrbitNystroem(group, **kw).fit(X)
    old.plan_.strategy.dots_kernels = False  # the former path: scikit-learn's float64 kernel on the host
    assert new.plan_.path == "data" and new.plan_.from_dots and not old.plan_.from_dots
    F_new, t_new = time_transform(new, X, repeat)
    F_old, t_old = time_transform(old, X, repeat)
    run = {"backend": backend, "device": device, "dtype": dtype, "numpy": np.__version__,
           "cpu_count": os.cpu_count(), "threads": os.environ.get("OMP_NUM_THREADS"), "machine": platform.machine(),
           "rows": rows, "landmarks": landmarks, "r": r, "d": X.shape[1], "repeat": repeat,
           "sklearn_pairwise_s": round(t_old, 3), "product_form_s": round(t_new, 3), "ratio": round(t_old / t_new, 2),
           "max_rel_diff": float(np.abs(F_new - F_old).max() / np.abs(F_old).max())}
    if backend == "torch" and str(device).startswith("cuda"):
        import torch

        run["gpu"] = torch.cuda.get_device_name(device)
    print(json.dumps(run, indent=1))
    path = Path(out)
    res = json.loads(path.read_text()) if path.is_file() else {}
    res.update({"protocol": __doc__.strip().splitlines()[0], "script": "benchmarks/probes/perf/data_path_rbf.py"})
    res.setdefault("runs", {})[f"{backend}/{device or 'default'}/{dtype}"] = run
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")


def automatic_precision(rows, landmarks, r, out):
    """The kernel values' precision OrbitNystroem picks by itself (``dtype=None``, ``precision_``) at this shape, on
    float32 and on float64 rows: whether a user who does not force ``dtype="float32"`` meets the float32 runs' error."""
    X, group, kw = setup(rows, landmarks, r)
    chosen = {f"{dtype}_rows": OrbitNystroem(group, **kw).fit(X.astype(dtype)).precision_
              for dtype in ("float32", "float64")}
    print(json.dumps(chosen))
    path = Path(out)
    res = json.loads(path.read_text()) if path.is_file() else {}
    res["automatic_precision"] = dict(chosen, rows=rows, landmarks=landmarks, r=r)
    path.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--landmarks", type=int, default=1000)
    ap.add_argument("--r", type=int, default=70)
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="results/bench/data_path_rbf_probe.json")
    ap.add_argument("--automatic-precision", action="store_true",
                    help="record the precision the map picks by itself at this shape (no timing)")
    a = ap.parse_args()
    if a.automatic_precision:
        automatic_precision(a.rows, a.landmarks, a.r, a.out)
    else:
        main(a.rows, a.landmarks, a.r, a.backend, a.device, a.dtype, a.repeat, a.out)
