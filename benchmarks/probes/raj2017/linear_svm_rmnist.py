"""Raj et al. 2017, Table 2: the paper reports "linear SVM or linear RLS" on its features (§4); does a linear SVM in place of the reproduction's RLS move the rows short of the paper?

Every image cell of the reproduction fits regularised least squares (one-vs-all, λ on the validation split, refit on
train + validation). Raj §4 says of every random-feature row: "we report performance with (i) linear decision boundary
on these features (linear SVM or linear regularized least squares (RLS))", parameters "selected using grid search on a
hold-out validation set". This probe keeps a row's first layer as its cell computes it (the law, γ factor, D, r and
seed the reproduction chose and recorded; ``raj2017._image_feature_map``) and replaces the classifier by a linear SVM:
the hinge loss with an intercept, libsvm's one-vs-one multi-class (scikit-learn's ``SVC`` on the linear kernel
ψ(x)ᵀψ(x') of the features, given as the precomputed Gram matrix: the same solution as ``SVC(kernel="linear")`` on ψ,
in a fraction of the time at D = 14000), C on a decade grid chosen on the validation split (fit on the 10k training
digits), then refit on train + validation and scored on the 50k test digits, as the RLS cells are. The recorded RLS
cell of the row sits beside it (``recorded_rls_accuracy``). The other common reading of "linear SVM", liblinear's
(scikit-learn's ``LinearSVC``: the squared hinge, one-vs-rest, its primal Newton solver), runs at D = 2000 (the
reproduction's smaller cells) and, with ``--liblinear``, at D = 14000 (2.5-5 minutes a fit there).

Rows: ``orig_rf`` (Original (RF): 87.18 % with RLS at D = 14000, the paper's 87.75 %), ``lgika_rf_r100_qmc`` (LGIKA
(RF), r = 100 low-variance rotations: 96.87 %, the paper's 96.83 %) and ``lgika_rf_r100`` (the paper's i.i.d.
rotations: 96.09 %). Run from the repository root (ORBITKERNELS_DATA set): ``python
benchmarks/probes/raj2017/linear_svm_rmnist.py --rows orig_rf lgika_rf_r100`` (D = 14000), ``... --rows
lgika_rf_r100_qmc``, ``... --dim 2000 --rows orig_rf lgika_rf_r100_qmc``, then ``... --liblinear --rows orig_rf``,
``... --liblinear --rows lgika_rf_r100_qmc``, ``... --liblinear --rows lgika_rf_r100`` and ``... --layer2``: the hinge
SVM on the headline 2nd layer of LGIKA (RF) (17k orthogonal frequencies over its D = 14000 first layer, the cell
``orf|lgika_rf_r100_qmc|14000``: 97.01 % with RLS, the paper's 97.18 %), γ₂ factor and C on validation; last ``...
--wide-c --liblinear --rows lgika_rf_r100``, both SVMs again with C up to 1e4 on the i.i.d. row, where both chose the
decade grid's largest C; several processes may run side by side; each finished variant is written at once to
``results/raj2017/linear_svm_rmnist_probes.json`` and skipped on a rerun.
"""
import argparse
from pathlib import Path

import numpy as np
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

from orbitkernels.experiments import raj2017
from orbitkernels.experiments._raj_eval import WideLayer2, layer2_scale, median_sq_dist
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.groups import ImageRotation
from orbitkernels.utils.io import read_json

OUT = Path("results/raj2017/linear_svm_rmnist_probes.json")
RECORD = Path("results/raj2017/rotated_mnist.json")
SEED, DIM = 0, 14000
ROWS = ("orig_rf", "lgika_rf_r100_qmc", "lgika_rf_r100")
CS = 10.0 ** np.arange(-1, 4)  # C per decade, 0.1 to 1000 (the features have ||ψ(x)|| <= 1)
CS_WIDE = 10.0 ** np.arange(-1, 5)  # --wide-c: one decade more, for a row whose C is at the grid's edge


def _selection(table, Cs):
    """The fields of a cell's C chosen on validation: the first (smallest) C of the best validation accuracy."""
    best = max(table, key=table.get)
    return {"C": best, "valid_acc": table[best], "valid_acc_per_C": table,
            "C_at_grid_edge": "yes" if best in (float(Cs[0]), float(Cs[-1])) else "no"}


def linear_svm_cell(F, y, train, valid, test, Cs=CS, step=5000):
    """Linear SVM (hinge, intercept, one-vs-one) on the features ``F``: C on validation, refit on train + validation."""
    fit_rows = np.concatenate([train, valid])
    ntr = len(train)
    Ff = F[fit_rows]
    K = (Ff @ Ff.T).astype(np.float64)  # rows and columns: train, then validation
    table = {}
    for C in Cs:
        clf = SVC(kernel="precomputed", C=C).fit(K[:ntr, :ntr], y[train])
        table[float(C)] = float(np.mean(clf.predict(K[ntr:, :ntr]) == y[valid]))
    chosen = _selection(table, Cs)
    clf = SVC(kernel="precomputed", C=chosen["C"]).fit(K, y[fit_rows])
    del K
    pred = np.concatenate([clf.predict((F[test[a:a + step]] @ Ff.T).astype(np.float64))
                           for a in range(0, len(test), step)])
    return {"accuracy": 100.0 * float(np.mean(pred == y[test])), **chosen,
            "support_vectors": int(clf.n_support_.sum())}


def liblinear_cell(F, y, train, valid, test, Cs=CS):
    """liblinear's linear SVM (scikit-learn's ``LinearSVC``: squared hinge, one-vs-rest, primal Newton): C on
    validation, refit on train + validation, test accuracy. The other common reading of "linear SVM"."""
    fit_rows = np.concatenate([train, valid])
    table = {}
    for C in Cs:
        clf = LinearSVC(C=C, dual=False, max_iter=2000).fit(F[train], y[train])
        table[float(C)] = float(clf.score(F[valid], y[valid]))
    chosen = _selection(table, Cs)
    clf = LinearSVC(C=chosen["C"], dual=False, max_iter=2000).fit(F[fit_rows], y[fit_rows])
    return {"accuracy": 100.0 * float(clf.score(F[test], y[test])), **chosen}


def layer2_svm_cell(F, y, train, valid, test, wide_cfg, seed, Cs=CS, step=4000):
    """The hinge SVM (one-vs-one) on the 2nd RF layer at the paper's width over the first layer ``F``: the layer of
    ``raj2017._image_wide_cell`` (:class:`WideLayer2`, the same frequencies, γ₂ grid and scale), used through its Gram
    matrix; γ₂ factor and C on the validation split, refit on train + validation; the test rows' kernel values are
    computed against the support vectors only (libsvm reads no other column)."""
    fit_rows = np.concatenate([train, valid])
    ntr = len(train)
    scale = layer2_scale(F, train, seed)
    wide = WideLayer2(F, wide_cfg["n_freq"], seed, frequencies=wide_cfg.get("frequencies", "gaussian"))
    gammas = {f: f / scale for f in wide_cfg["factors"]}
    K = wide.grams(fit_rows, list(gammas.values()))
    table = {}
    for f, g in gammas.items():
        for C in Cs:
            clf = SVC(kernel="precomputed", C=C).fit(K[g][:ntr, :ntr], y[train])
            table[f"{f:g}|{C:g}"] = float(np.mean(clf.predict(K[g][ntr:, :ntr]) == y[valid]))
    best = max(table, key=table.get)
    f, C = (float(v) for v in best.split("|"))
    clf = SVC(kernel="precomputed", C=C).fit(K[gammas[f]], y[fit_rows])
    del K
    sv = clf.support_
    pred = []
    for _, Ksv in wide.cross_gram(test, fit_rows[sv], gammas[f], step=step):
        Kt = np.zeros((len(Ksv), len(fit_rows)))
        Kt[:, sv] = Ksv
        pred.append(clf.predict(Kt))
    return {"accuracy": 100.0 * float(np.mean(np.concatenate(pred) == y[test])), "layer2_factor": f, "C": C,
            "valid_acc": table[best], "valid_acc_per_factor_C": table, "support_vectors": int(len(sv)),
            "n_freq": int(wide_cfg["n_freq"]), "frequencies": wide_cfg.get("frequencies", "gaussian")}


def _probes():
    return ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                     script="benchmarks/probes/raj2017/linear_svm_rmnist.py", experiment="rotated_mnist", seed=SEED,
                     C_grid=CS.tolist())


class _Rows:
    """Rotated MNIST (the reproduction's split) and the recorded cells, read once; a row's first layer as its cell
    computes it (the law, γ factor, D, r and seed recorded)."""

    def __init__(self):
        _, self.X, self.y, self.train, self.valid, self.test = raj2017.rotated_mnist_split()
        self.cfg = raj2017.CONFIGS["rotated_mnist"]["reduced"]
        self.cells = read_json(RECORD)["cells"]
        self.scale = median_sq_dist(self.X[self.train], seed=SEED)

    def features(self, row, dim, cell):
        group = None if cell["law"] is None else ImageRotation((28, 28), angle=raj2017._angle_law(cell["law"]))
        fm = raj2017._image_feature_map(row, group, dim, cell["gamma_factor"] / self.scale, self.cfg["r"], self.cfg,
                                        SEED)
        return fm.fit(self.X[self.train]).transform(self.X).astype(np.float32)


def main_layer2(row="lgika_rf_r100_qmc"):
    """The hinge SVM on the headline 2nd-layer cell of ``row`` (``orf|row|14000``: 17k orthogonal frequencies)."""
    probes = _probes()
    key = f"{row}, D={DIM}, 2nd RF layer (17k orthogonal frequencies): linear SVM"
    if probes.has(key):
        return
    d = _Rows()
    cell, rls = d.cells[f"{row}|{DIM}"], d.cells[f"orf|{row}|{DIM}"]
    probes.record(key, lambda: {
        **layer2_svm_cell(d.features(row, DIM, cell), d.y, d.train, d.valid, d.test, d.cfg["layer2_orthogonal"],
                          SEED), "row": row, "recorded_rls_accuracy": round(rls["accuracy"], 3)})


def main(rows, dim=DIM, liblinear=False, wide_c=False, hinge=True):
    probes = _probes()
    Cs, tag = (CS_WIDE, ", C up to 1e4") if wide_c else (CS, "")
    d = None
    for row in rows:
        fits = {f"{row}, D={dim}: linear SVM{tag}": linear_svm_cell} if hinge else {}
        if liblinear or dim != DIM:  # liblinear's primal solver: 2.5-5 minutes a fit at D = 14000 (C <= 1e4)
            fits[f"{row}, D={dim}: liblinear linear SVM (squared hinge, one-vs-rest){tag}"] = liblinear_cell
        if all(probes.has(k) for k in fits):
            continue
        if d is None:  # the data only when a variant is left to run
            d = _Rows()
        cell = d.cells[f"{row}|{dim}"]
        F = d.features(row, dim, cell)
        for key, fit in fits.items():
            probes.record(key, lambda fit=fit, F=F, cell=cell, row=row: {
                **fit(F, d.y, d.train, d.valid, d.test, Cs=Cs), "row": row, "gamma_factor": cell["gamma_factor"],
                "recorded_rls_accuracy": round(cell["accuracy"], 3)})
        del F

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    ap.add_argument("--dim", type=int, choices=[2000, DIM], default=DIM,
                    help="the row's D: 14000 (the paper's size) or 2000, where liblinear's solver runs too")
    ap.add_argument("--liblinear", action="store_true",
                    help="at D = 14000 too, liblinear's linear SVM (15-22 minutes a row here); always run at D = 2000")
    ap.add_argument("--layer2", action="store_true",
                    help="instead: the hinge SVM on LGIKA (RF)'s 2nd RF layer at the paper's width (~20 minutes here)")
    ap.add_argument("--wide-c", action="store_true",
                    help="C over 0.1 .. 1e4 (variants named '..., C up to 1e4'), past the grid's edge")
    ap.add_argument("--no-hinge", action="store_true", help="liblinear's SVM only (with --liblinear)")
    args = ap.parse_args()
    if args.no_hinge and not (args.liblinear or args.dim != DIM):
        ap.error("--no-hinge leaves nothing to fit at D = 14000 without --liblinear")
    with threadpool_limits(1):
        if args.layer2:
            main_layer2()
        else:
            main(args.rows, args.dim, args.liblinear, args.wide_c, not args.no_hinge)
