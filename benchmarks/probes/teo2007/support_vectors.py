"""Teo et al. (2007, Fig. 1, right): does Invar-SVM use "roughly half" the support vectors of VIR-SVM?

The reproduction (``orbitkernels reproduce teo2007 --experiment mnist``) finds 0.89 at 50 digits per class (on the
solver of stop 63, which this probe's fits ran on; 0.8859 before stop 62's fix of the block steps, 0.8837 between
the two): VIR-SVM there is scikit-learn's
SVC (libsvm, one-vs-one: 45 binary machines, each with its own C per training vector) and a support vector is a
distinct vector with a non-zero weight in any machine. The paper
trains both with SVMStruct, i.e. VIR-SVM is a *multi-class* (Crammer-Singer) SVM on the original and virtual
samples, solved by the same column generation as Invar-SVM. This probe separates the conventions that can
move the ratio, on the reproduction's own draws (50/class, the recorded (γ, C) = (0.02, 10), the 20
transformations, the full 10k test set):

- **solver of VIR-SVM**: libsvm one-vs-one (the reproduction) or multi-class column generation
  (``InvariantSVC`` with no transformations on the 10,500 original + virtual samples: the paper's protocol);
- **C of VIR-SVM**: the same C per sample, or C / 21 (SVMStruct's objective is C/n Σ ξ_i, so one C for a
  training set 21 times larger gives each sample 1/21 of the budget that an original has in Invar-SVM);
- **what is counted**: distinct transformed vectors with a non-zero weight (the reproduction's count), distinct
  originals that own one (an original whose copies are support vectors counts once), and active constraints
  (example, label, transformation) with α > 0 (for one-vs-one: the sum over the 45 machines);
- **ε of Algorithm 1** (0.1 is SVMStruct's default, the reproduction's): 0.01, 0.1 and 0.5 for both.

- **the hyper-parameters** (``--grid``): the paper trains every method "with well-chosen hyperparameters" and does
  not give them; the reproduction selects (γ, C) per method on a validation split and every method chose (0.02, 10).
  The support-vector counts move with C (a larger C leaves fewer vectors at the bound), so this fits Invar-SVM and
  the multi-class VIR-SVM at each other (γ, C) of that grid, SVMStruct's default ε, 50 per class, and records both
  counts and test errors: is there a setting where the ratio is one half? ``--select`` then chooses (γ, C) for
  each of the two column-generation fits as the reproduction chooses for its methods (validation error on its
  selection split, 20 per class, ties to the smaller C, then γ), the multi-class VIR-SVM in place of libsvm's: the
  ratio at the points that validation, not the test set, picks.

- **training size** (``--per-class``): the paper's sizes 10-40 per class and sizes past its figure (100, 200),
  drawn as the reproduction draws a cell of that size, at the same (γ, C); SVMStruct's default ε only and the
  three conventions above (libsvm one-vs-one, multi-class with C, Invar-SVM), to see whether the ratio moves
  towards one half as the training set grows.

Run from the repository root (ORBITKERNELS_DATA set): ``python benchmarks/probes/teo2007/support_vectors.py``;
each finished variant is written at once to ``results/teo2007/support_vectors_probes.json`` and skipped on a
rerun (``--draws 0 1 2`` chooses the draws, ``--per-class 100`` the training size).
"""
import argparse
import re
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from orbitkernels.datasets import load_mnist
from orbitkernels.experiments._common import stratified
from orbitkernels.experiments.teo2007 import MNIST_FULL, mnist_transformations, ovo_predict
from orbitkernels.models import InvariantSVC
from orbitkernels.experiments.report import ProbeFile

OUT = Path("results/teo2007/support_vectors_probes.json")
SEED, PER_CLASS, GAMMA, C = 0, 50, 0.02, 10.0   # the reproduction's seed, largest size and selected (γ, C)
GRID_GAMMAS, GRID_CS = tuple(MNIST_FULL["gammas"]), tuple(MNIST_FULL["Cs"])  # the reproduction's selection grid


def _split():
    """The reproduction's MNIST split (``run_mnist``): the training digits as rows, the ``n_valid`` validation digits
    held out of every pool, the pool the cells draw from, and the loaded bundle (for its test set)."""
    b = load_mnist()
    Xall = b.x_train.reshape(len(b.x_train), -1).astype(np.float64) / 255.0
    perm = np.random.default_rng([SEED, 2007]).permutation(len(b.y_train))
    return Xall, b.y_train.astype(int), np.sort(perm[:MNIST_FULL["n_valid"]]), np.sort(perm[MNIST_FULL["n_valid"]:]), b


def data(draw, per_class=PER_CLASS):
    """The training digits of the reproduction's cell (``per_class``, draw), its test set and transformations."""
    Xall, yall, _, pool, b = _split()
    idx = stratified(yall, per_class, np.random.default_rng([SEED, per_class, draw]), pool)
    Xte = b.x_test.reshape(len(b.x_test), -1).astype(np.float64) / 255.0
    return Xall[idx], yall[idx], Xte, b.y_test.astype(int), mnist_transformations()


def selection_data():
    """The reproduction's selection split: ``select_per_class`` digits per class from the training pool and the
    validation digits; with the transformations."""
    Xall, yall, valid, pool, _ = _split()
    idx = stratified(yall, MNIST_FULL["select_per_class"], np.random.default_rng([SEED, 99]), pool)
    return Xall[idx], yall[idx], Xall[valid], yall[valid], mnist_transformations()


def select_key(fit, gamma, C_):
    return f"selection {fit} gamma={gamma:g} C={C_:g}"


def chosen(variants, fit):
    """The (γ, C) the validation split chooses for ``fit`` as the reproduction chooses: the lowest validation error,
    ties to the smaller C, then the smaller γ; None until the whole grid has run."""
    cands = [(variants[select_key(fit, g, c)]["error"], c, g) for g in GRID_GAMMAS for c in GRID_CS
             if select_key(fit, g, c) in variants]
    if len(cands) < len(GRID_GAMMAS) * len(GRID_CS):
        return None
    err, c, g = min(cands)
    return g, c


def owners(vectors, copies):
    """Index (original, transformation) of each row of ``vectors`` among the stacked ``copies`` (exact match:
    the transformations are deterministic, so a support vector is bitwise one of the copies)."""
    table = {row.tobytes(): k for k, row in enumerate(copies)}
    return np.array([table[v.tobytes()] for v in np.ascontiguousarray(vectors)])


def invariant(X, y, Xte, yte, V, n, transformations, C, tol, gamma=GAMMA):
    t0 = time.perf_counter()
    model = InvariantSVC(C=C, gamma=gamma, kernel="rbf", transformations=transformations, tol=tol,
                         max_constraints_per_pass=MNIST_FULL["invar_constraints_per_pass"],
                         max_iter=MNIST_FULL["invar_max_iter"]).fit(X, y)
    fit_s = time.perf_counter() - t0
    k = owners(model.support_vectors_, V)
    return dict(error=float(np.mean(model.predict(Xte) != yte)), transformed_vectors=int(model.n_support_),
                distinct_originals=int(len(np.unique(k % n))), active_constraints=int(model.n_active_constraints_),
                passes=int(model.n_iter_), converged=bool(model.converged_), fit_s=round(fit_s, 1))


def virtual(X, y, trans):
    """The original and virtual samples: the originals, then each transformation (row k -> (k % n, k // n))."""
    return np.vstack([X] + [t(X) for t in trans]), np.tile(y, len(trans) + 1)


#: the two column-generation fits compared at each (γ, C), SVMStruct's default ε: Invar-SVM, the multi-class VIR-SVM
PAIR_FITS = ("Invar-SVM eps=0.1, C", "VIR-SVM multi-class eps=0.1, C")


def record_pair(probes, keys, X, y, Xe, ye, V, yV, trans, gamma, C_):
    """Invar-SVM on (X, y) with ``trans`` and the multi-class VIR-SVM on the virtual samples (V, yV), both at (γ, C_)
    and ε = 0.1, scored on (Xe, ye), stored as ``keys`` (Invar-SVM's, VIR-SVM's)."""
    n = len(X)
    probes.record(keys[0], lambda: invariant(X, y, Xe, ye, V, n, trans, C_, 0.1, gamma))
    probes.record(keys[1], lambda: invariant(V, yV, Xe, ye, V, n, None, C_, 0.1, gamma))


def variant_key(per_class, draw, fit, gamma=GAMMA, C_=C):
    """A variant's key: ``"draw{d} {fit}"`` at 50 per class (the keys predate the size axis), else
    ``"n{per_class} draw{d} {fit}"``; :func:`ratios_by_size` reads them back. Away from the reproduction's (γ, C)
    the key starts ``"gamma={γ} C={C} "`` (the hyper-parameter grid, 50 per class)."""
    key = f"draw{draw} {fit}" if per_class == PER_CLASS else f"n{per_class} draw{draw} {fit}"
    return key if (gamma, C_) == (GAMMA, C) else f"gamma={gamma:g} C={C_:g} {key}"


def ratios_by_size(variants):
    """Invar-SVM over VIR-SVM at each training size, SVMStruct's default ε, mean over the draws that have all three
    fits: distinct transformed vectors against the multi-class VIR-SVM (the paper's solver) and against libsvm's
    one-vs-one (the reproduction's), and active constraints against the multi-class VIR-SVM.

    Returns ``{per_class: {"draws": [...], "vectors": r, "vectors_ovo": r, "active": r}}``, sizes ascending."""
    pattern = re.compile(r"^(?:n(\d+) )?draw(\d+) (.+)$")
    fits = {}
    for key, v in variants.items():
        m = pattern.match(key)
        if m:
            size = int(m.group(1) or PER_CLASS)
            fits.setdefault((size, int(m.group(2))), {})[m.group(3)] = v
    out = {}
    for (size, draw), f in sorted(fits.items()):
        inv, mc, ovo = (f.get(k) for k in (*PAIR_FITS, "VIR-SVM libsvm one-vs-one, C"))
        if inv and mc and ovo:
            row = out.setdefault(size, {"draws": [], "vectors": [], "vectors_ovo": [], "active": []})
            row["draws"].append(draw)
            row["vectors"].append(inv["transformed_vectors"] / mc["transformed_vectors"])
            row["vectors_ovo"].append(inv["transformed_vectors"] / ovo["transformed_vectors"])
            row["active"].append(inv["active_constraints"] / mc["active_constraints"])
    return {size: {k: (v if k == "draws" else float(np.mean(v))) for k, v in row.items()}
            for size, row in out.items()}


def ratios_by_hyperparameters(variants, draw=0):
    """Invar-SVM over the multi-class VIR-SVM at 50 per class and SVMStruct's default ε for each (γ, C) of the
    reproduction's selection grid that has both fits: ``{(γ, C): {"vectors", "active", "error_invar", "error_vir"}}``
    (distinct transformed vectors, active constraints, and the two test errors)."""
    out = {}
    for g in GRID_GAMMAS:
        for c in GRID_CS:
            inv, vir = (variants.get(variant_key(PER_CLASS, draw, f, g, c)) for f in PAIR_FITS)
            if inv and vir:
                out[(g, c)] = dict(vectors=inv["transformed_vectors"] / vir["transformed_vectors"],
                                   active=inv["active_constraints"] / vir["active_constraints"],
                                   error_invar=inv["error"], error_vir=vir["error"])
    return out


def main(draws, sizes=(PER_CLASS,), grid=False, select=False):
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/teo2007/support_vectors.py", experiment="mnist",
                       per_class=PER_CLASS, gamma=GAMMA, C=C, seed=SEED)
    if select:  # the validation errors of the two column-generation fits over the grid, then their choices
        X, y, Xv, yv, trans = selection_data()
        V, yV = virtual(X, y, trans)
        for g, c in ((g, c) for c in GRID_CS for g in GRID_GAMMAS):
            record_pair(probes, (select_key("Invar-SVM", g, c), select_key("VIR-SVM multi-class", g, c)),
                        X, y, Xv, yv, V, yV, trans, g, c)
        return

    for per_class, draw in ((p, d) for p in sizes for d in draws):
        X, y, Xte, yte, trans = data(draw, per_class)
        n, r = len(X), len(trans) + 1
        V, yV = virtual(X, y, trans)

        def vir_ovo():
            model = SVC(C=C, gamma=GAMMA, kernel="rbf").fit(V, yV)
            # one-vs-one: each of the 45 machines has its own dual weights; libsvm stores a vector once
            active = int(sum(np.count_nonzero(model.dual_coef_[:, s]) for s in range(len(model.support_))))
            return dict(error=float(np.mean(ovo_predict(model, Xte) != yte)),
                        transformed_vectors=int(model.n_support_.sum()),
                        distinct_originals=int(len(np.unique(model.support_ % n))), active_constraints=active)

        def record(fit, compute):
            probes.record(variant_key(per_class, draw, fit), compute)

        def pair(g, c):
            record_pair(probes, tuple(variant_key(per_class, draw, f, g, c) for f in PAIR_FITS),
                        X, y, Xte, yte, V, yV, trans, g, c)

        if grid:  # the reproduction's selection grid of (γ, C), SVMStruct's default ε, the two column-generation fits
            for g, c in ((g, c) for c in GRID_CS for g in GRID_GAMMAS if (g, c) != (GAMMA, C)):
                pair(g, c)
            continue
        record("VIR-SVM libsvm one-vs-one, C", vir_ovo)
        pair(GAMMA, C)
        record("STD-SVM multi-class eps=0.1, C", lambda: invariant(X, y, Xte, yte, X, n, None, C, 0.1))
        if per_class != PER_CLASS:
            continue  # the other conventions and ε at the reproduction's size only
        record("VIR-SVM multi-class eps=0.1, C/21", lambda: invariant(V, yV, Xte, yte, V, n, None, C / r, 0.1))
        record("Invar-SVM eps=0.01, C", lambda: invariant(X, y, Xte, yte, V, n, trans, C, 0.01))
        record("VIR-SVM multi-class eps=0.01, C", lambda: invariant(V, yV, Xte, yte, V, n, None, C, 0.01))
        record("Invar-SVM eps=0.5, C", lambda: invariant(X, y, Xte, yte, V, n, trans, C, 0.5))
        record("VIR-SVM multi-class eps=0.5, C", lambda: invariant(V, yV, Xte, yte, V, n, None, C, 0.5))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, nargs="+", default=[0])
    ap.add_argument("--per-class", type=int, nargs="+", default=[PER_CLASS])
    ap.add_argument("--select", action="store_true",
                    help="validation errors of Invar-SVM and the multi-class VIR-SVM over the (gamma, C) grid on the "
                         "reproduction's selection split (its choice rule then picks each method's point)")
    ap.add_argument("--grid", action="store_true",
                    help="Invar-SVM and the multi-class VIR-SVM at every other (gamma, C) of the selection grid")
    args = ap.parse_args()
    with threadpool_limits(1):
        main(args.draws, args.per_class, args.grid, args.select)
