"""Choosing the group and its sampling: i.i.d. against low-variance (QMC) group samples.

    ORBITKERNELS_DATA=/path/to/data python benchmarks/sampling_study.py [--quick] [--out results] [--parts ...]

Writes ``results/sampling/sampling_<part>.json`` for each measurement, then merges them into
``sampling.json`` and ``sampling.png`` (``sampling_quick*`` with --quick). The parts are
independent processes' work: ``--parts digits mnist`` runs two of them, ``--combine-only`` merges.
Three measurements, all with orbit random Fourier features (Raj et al. 2017, Eq. 7):

1. **Full rotation invariance** (the default ``ImageRotation(shape)``, uniform law on the
   circle): train on upright digits, test on the same test digits each turned by a uniform
   random angle, ridge classifier (λ by leave-one-out). Rotated-test accuracy, invariance error
   (:func:`orbitkernels.diagnostics.invariance_error`) and fit + transform time against the
   number r of group samples, for

   * ``iid``: r angles drawn i.i.d. (the papers' scheme, ``sampling="iid"``), 3 seeds;
   * ``default``: what ``ImageRotation(shape)`` does with the default ``sampling="qmc"``;
   * ``grid-bilinear``: ``ImageRotation(shape, n_angles=r)`` (equispaced, pixel-grid warp);
   * ``polar``: ``PolarRotation(shape, n_angles=r)`` (equispaced, polar-grid FFT path).

   On scikit-learn's digits (8×8 zero-padded to 12×12; 1200 train, 597 test) and on MNIST
   (28×28; 3000 random training and 2000 random test digits).
2. **Local invariance** (Raj's non-uniform q): the error of the orbit embedding's group
   average itself, ‖ψ_r(x) − ψ_ref(x)‖ / ‖ψ_ref(x)‖, for a von Mises law on rotations and for a
   product of rotations and Gaussian translations, where ψ_ref averages many i.i.d. elements
   with the same frequencies (2048 of them); i.i.d. against QMC for several r (mean over
   images and 5 seeds).
   This isolates the group-sampling error from the random-feature error.
3. **Rotated MNIST row** of Raj et al.'s Table 2 at D = 2000 (r = 16 von Mises rotations,
   κ = 0.2 around π, as in ``orbitkernels reproduce raj2017``): i.i.d. against QMC, same
   regenerated data and λ selection.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeClassifierCV

from orbitkernels import __version__
from orbitkernels.datasets import DatasetNotFoundError, load_mnist, load_rotated_mnist
from orbitkernels.diagnostics import invariance_error
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import ImageRotation, ImageTranslation, Normal, PolarRotation, VonMises
from orbitkernels.utils.io import atomic_write_json

ALPHAS = np.logspace(-5, 2, 8)


def _digits(seed=0):
    d = load_digits()
    X = np.pad(d.images / 16.0, ((0, 0), (2, 2), (2, 2))).reshape(len(d.images), -1)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    tr, te = order[:1200], order[1200:]
    return X[tr], d.target[tr], X[te], d.target[te], (12, 12), 0.05, 1000


def _mnist(n_train, n_test, seed=0):
    m = load_mnist()
    rng = np.random.default_rng(seed)
    tr = rng.choice(len(m.x_train), n_train, replace=False)
    te = rng.choice(len(m.x_test), n_test, replace=False)
    f = lambda x: (x.reshape(len(x), -1) / 255.0).astype(np.float32)  # noqa: E731
    return f(m.x_train[tr]), m.y_train[tr], f(m.x_test[te]), m.y_test[te], (28, 28), 0.02, 2000


def _rotate_uniform(X, shape, seed):
    rot = ImageRotation(shape)
    return rot.act_each(X, rot.sample(len(X), seed, sampling="iid")).astype(X.dtype)


def _rotation_methods(shape, r):
    full = ImageRotation(shape)
    return {
        "iid": lambda seed: OrbitFourierFeatures(full, n_group_samples=r, sampling="iid", random_state=seed),
        "default": lambda seed: OrbitFourierFeatures(full, n_group_samples=r, random_state=seed),
        "grid-bilinear": lambda seed: OrbitFourierFeatures(ImageRotation(shape, n_angles=r), random_state=seed),
        "polar": lambda seed: OrbitFourierFeatures(PolarRotation(shape, n_angles=r), random_state=seed),
    }


def full_rotation(data, rs, seeds_iid, log):
    Xtr, ytr, Xte, yte, shape, gamma, s = data
    Xrot = _rotate_uniform(Xte, shape, 1)
    probe = ImageRotation(shape)
    rows = []
    for r in rs:
        for name, make in _rotation_methods(shape, r).items():
            for seed in (seeds_iid if name == "iid" else (0,)):
                f = make(seed).set_params(gamma=gamma, n_components=s)
                t0 = time.perf_counter()
                Ftr = f.fit_transform(Xtr)
                Fte = f.transform(Xrot)
                t = time.perf_counter() - t0
                clf = RidgeClassifierCV(alphas=ALPHAS).fit(Ftr, ytr)
                acc = float(clf.score(Fte, yte))
                inv = invariance_error(f, Xte[:200], probe, n_elements=4, random_state=0)
                row = dict(method=name, r=r, seed=seed, accuracy=acc, invariance_error=float(inv["mean"]),
                           seconds=t, path=f.plan_.path, group=type(f.plan_.group).__name__)
                log(row)
                rows.append(row)
    return rows


def _group_average(group, X, W, E):
    """(1/r) Σ_k exp(-i <ω_j, g_k x>) as [cos, sin] (Raj Eq. 7 without the 1/sqrt(s)), in blocks of elements."""
    acc = np.zeros((len(X), 2 * len(W)))
    for a in range(0, len(E), 256):
        S = group.act(X, E[a : a + 256]) @ W.T  # (block, n, s)
        acc += np.concatenate([np.cos(S).sum(0), np.sin(S).sum(0)], axis=1)
    return acc / len(E)


def local_invariance(X, shape, rs, seeds, log, n_ref=2048, s=200, gamma=0.02):
    groups = {
        "von Mises rotations (kappa=2)": ImageRotation(shape, angle=VonMises(2.0)),
        "rotations x Gaussian shifts": ImageRotation(shape, angle=VonMises(2.0))
        * ImageTranslation(shape, shift=Normal(1.0)),
    }
    errors = {}
    for gname, group in groups.items():
        for seed in seeds:
            rng = np.random.default_rng(seed)
            W = rng.normal(scale=np.sqrt(2 * gamma), size=(s, X.shape[1]))
            # the reference average: many i.i.d. elements, independent of the estimates below
            ref = _group_average(group, X, W, group.sample(n_ref, 10_000 + seed, sampling="iid"))
            for r in rs:
                for sampling in ("iid", "qmc"):
                    est = _group_average(group, X, W, group.sample(r, seed, sampling=sampling))
                    err = np.mean(np.linalg.norm(est - ref, axis=1) / np.linalg.norm(ref, axis=1))
                    errors.setdefault((gname, r, sampling), []).append(float(err))
    rows = []
    for (gname, r, sampling), errs in errors.items():
        row = dict(group=gname, r=r, sampling=sampling, error=float(np.mean(errs)), error_std=float(np.std(errs)),
                   n_seeds=len(errs), n_ref=n_ref)
        log(row)
        rows.append(row)
    return rows


def rotated_mnist_row(n_components, quick, log):
    sizes = dict(n_train=2000, n_valid=500, n_test=2000) if quick else dict(n_train=10000, n_valid=2000, n_test=50000)
    d = load_rotated_mnist(source="regenerated", **sizes)
    shape = (28, 28)
    law = VonMises(0.2, loc=np.pi)
    rows = []
    for sampling in ("iid", "qmc"):
        f = OrbitFourierFeatures(ImageRotation(shape, angle=law), gamma=0.02, n_components=n_components // 2,
                                 n_group_samples=16, sampling=sampling, random_state=0)
        t0 = time.perf_counter()
        Ftr, Fva, Fte = f.fit_transform(d.x_train), f.transform(d.x_valid), f.transform(d.x_test)
        best = max(((RidgeClassifierCV(alphas=[a]).fit(Ftr, d.y_train).score(Fva, d.y_valid), a) for a in ALPHAS))
        clf = RidgeClassifierCV(alphas=[best[1]]).fit(np.vstack([Ftr, Fva]), np.concatenate([d.y_train, d.y_valid]))
        row = dict(sampling=sampling, D=n_components, r=16, accuracy=100 * float(clf.score(Fte, d.y_test)),
                   alpha=float(best[1]), seconds=time.perf_counter() - t0, **sizes)
        log(row)
        rows.append(row)
    return rows


def _plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [k for k in ("digits", "mnist") if k in result["full_rotation"]]
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(4.5 * (len(panels) + 1), 3.6))
    for ax, key in zip(axes, panels):
        rows = result["full_rotation"][key]
        styles = {"iid": ("o", "-"), "default": ("x", ":"), "grid-bilinear": ("o", "-"), "polar": ("o", "-")}
        for name in ("iid", "grid-bilinear", "polar", "default"):  # the default (drawn last) runs on the polar grid
            sel = [x for x in rows if x["method"] == name]
            rs = sorted({x["r"] for x in sel})
            acc = [np.mean([x["accuracy"] for x in sel if x["r"] == r]) for r in rs]
            marker, ls = styles[name]
            ax.plot(rs, acc, marker=marker, ls=ls, color="k" if name == "default" else None,
                    label="default = ImageRotation(shape)" if name == "default" else name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("group samples r")
        ax.set_ylabel("rotated-test accuracy")
        ax.set_title(f"{key}: upright train, rotated test")
        ax.legend(fontsize=8)
    ax = axes[-1]
    for gname in sorted({x["group"] for x in result["local_invariance"]}):
        for sampling, ls in (("iid", "--"), ("qmc", "-")):
            sel = [x for x in result["local_invariance"] if x["group"] == gname and x["sampling"] == sampling]
            ax.plot([x["r"] for x in sel], [x["error"] for x in sel], ls, marker="o", label=f"{gname}, {sampling}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("group samples r")
    ax.set_ylabel("relative error of the group average")
    ax.set_title("local invariance (Raj's q)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


PARTS = ("digits", "mnist", "local", "rotated_mnist")


def run_part(part, quick, log):
    """One measurement; parts are independent, so they can run as separate processes."""
    rs = (8, 32) if quick else (8, 16, 32, 64, 128)
    seeds = (0, 1) if quick else (0, 1, 2)
    if part == "digits":
        return {"full_rotation": {"digits": full_rotation(_digits(), rs, seeds, log)}}
    mn = _mnist(1000, 500) if quick else _mnist(3000, 2000)
    if part == "mnist":  # r = 128 adds nothing on digits (the curves are flat from 32 on) at twice the cost
        return {"full_rotation": {"mnist": full_rotation(mn, rs[:4] if len(rs) > 4 else rs, seeds, log)}}
    if part == "local":
        return {"local_invariance": local_invariance(mn[0][:200], (28, 28), rs, (0, 1, 2, 3, 4), log)}
    return {"rotated_mnist": rotated_mnist_row(2000, quick, log)}


def _combine(out, stem, quick):
    """Merge the parts' files into ``<stem>.json`` and draw the figure."""
    result = dict(version=__version__, quick=quick, full_rotation={}, local_invariance=[], rotated_mnist=[], parts={})
    for part in PARTS:
        path = out / f"{stem}_{part}.json"
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        result["parts"][part] = {k: rec[k] for k in ("command", "wall_seconds", "machine", "cpus", "blas_threads")}
        result["full_rotation"].update(rec["result"].get("full_rotation", {}))
        for key in ("local_invariance", "rotated_mnist"):
            result[key] += rec["result"].get(key, [])
    atomic_write_json(out / f"{stem}.json", result)
    _plot(result, out / f"{stem}.png")
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, minutes)")
    ap.add_argument("--out", default="results", help="results folder (default: results)")
    ap.add_argument("--parts", nargs="*", default=list(PARTS), choices=PARTS,
                    help="measurements to run (default: all); each writes <stem>_<part>.json")
    ap.add_argument("--combine-only", action="store_true", help="only merge existing part files")
    ap.add_argument("--plot-only", action="store_true", help="only redraw <stem>.png from <stem>.json")
    args = ap.parse_args(argv)
    log = lambda row: print(json.dumps(row), flush=True)  # noqa: E731
    out = Path(args.out) / "sampling"
    out.mkdir(parents=True, exist_ok=True)
    stem = "sampling_quick" if args.quick else "sampling"
    if args.plot_only:
        _plot(json.loads((out / f"{stem}.json").read_text()), out / f"{stem}.png")
        return
    for part in ([] if args.combine_only else args.parts):
        t0 = time.time()
        try:
            res = run_part(part, args.quick, log)
        except DatasetNotFoundError as exc:
            print(f"skipped: {part} ({exc})")
            continue
        from threadpoolctl import threadpool_info
        rec = dict(command=f"python benchmarks/sampling_study.py{' --quick' if args.quick else ''} --parts {part}",
                   wall_seconds=time.time() - t0, machine=platform.machine(), cpus=os.cpu_count(),
                   blas_threads=max((p.get("num_threads", 1) for p in threadpool_info()), default=1), result=res)
        atomic_write_json(out / f"{stem}_{part}.json", rec)
    _combine(out, stem, args.quick)
    print(f"wrote {out / stem}.json and .png")


if __name__ == "__main__":
    main()
