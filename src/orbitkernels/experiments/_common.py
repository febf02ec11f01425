"""Helpers shared by the reproductions: regularised least squares over a λ grid, headline tables.

RLS (GURLS-style, as used by Mroueh et al. 2015 and Raj et al. 2017 §4) is solved by the one
ridge-path solver of :mod:`orbitkernels.models.ridge` (scikit-learn's α convention); the helpers
here only convert this reproduction's λ (penalty λ n ||w||²) to α = λ n.
"""
from __future__ import annotations

import numpy as np

from ..models.ridge import RidgePath as _RidgePath
from .report import _verdict

__all__ = ["PAPER_SAMPLING", "PAPER_FREQUENCIES", "RidgePath", "kernel_ridge_path", "kfold_indices", "headline_table",
           "pyplot", "mean_std", "seed_from", "stratified", "wrap_seed"]

#: How the reproductions draw group elements: i.i.d. from q, as the three papers do (and as every
#: recorded result in results/ was made). The library's default is the low-variance "qmc" scheme;
#: its effect on these rows is measured separately (benchmarks/sampling_study.py).
PAPER_SAMPLING = "iid"

#: How the reproductions draw random Fourier frequencies: i.i.d. Gaussian, as Raj et al. (Eq. 7, after Rahimi &
#: Recht) do and as every recorded cell was made. The library's default for the Gaussian kernel is orthogonal
#: random features (``OrbitFourierFeatures(frequencies="auto")``); a row drawing them says so
#: (``raj2017.Method.frequencies``), and the probes that do are benchmarks/probes/raj2017/orig_rf_gamma.py and
#: orthogonal_rf_qm7.py.
PAPER_FREQUENCIES = "iid"


class RidgePath:
    """Ridge ``min ||Φw + b - Y||² + λ n ||w||²`` for every λ of a grid (the Raj reproduction's λ).

    A thin adapter of :class:`orbitkernels.models.ridge.RidgePath` (one eigendecomposition, primal or
    dual, serves all λ), converting the λ of this convention to its ``α = λ n`` at ``fit``;
    ``predict(Φ_new)`` returns an array (n_lambdas, n_new, n_targets).
    ``Y`` may be 1-D (regression) or one-hot / ±1 coded (classification).
    """

    def __init__(self, lambdas):
        self.lambdas = np.asarray(lambdas, dtype=float)

    def fit(self, F, Y):
        """Fit every λ on the rows ``F`` (n, D) and targets ``Y`` (n,) or (n, k); returns self."""
        n = len(F)
        self.path_ = _RidgePath(self.lambdas * n).fit(F, Y)  # λ n ||w||² is α ||w||² with α = λ n
        return self

    def predict(self, F):
        """Predictions for the rows ``F``, one per λ: (n_lambdas, n_new, n_targets), n_targets 1 for a 1-D Y."""
        return self.path_.predict(F)


def kernel_ridge_path(K_train, y, K_test_train, lambdas):
    """Exact kernel ridge (GP posterior mean) predictions for every λ: (n_lambdas, n_test).

    ``(K + λ n I)⁻¹`` from one eigendecomposition of the training Gram matrix (not centred: the
    target mean is removed and added back, a constant-mean GP); α = λ n.
    """
    n = len(K_train)
    path = _RidgePath(np.asarray(lambdas, float) * n).fit_gram(K_train, y)
    return path.predict_gram(K_test_train)[:, :, 0]


class _Figures:
    """The two pyplot calls the experiments make, on bare matplotlib Figures.

    A bare Figure renders to a file without pyplot's global back-end and figure registry, so an experiment run
    from a notebook or a GUI session leaves the caller's back-end and open figures alone (``matplotlib.use("Agg")``
    switched them).
    """

    @staticmethod
    def subplots(nrows=1, ncols=1, *, figsize=None, **kwargs):
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize)
        return fig, fig.subplots(nrows, ncols, **kwargs)

    @staticmethod
    def close(fig):
        fig.clear()


def pyplot():
    """What the experiments draw with: ``subplots`` and ``close`` as in ``matplotlib.pyplot``, on bare Figures.

    matplotlib is imported on demand, so the experiments (and their tests) do not need it until a figure is drawn.
    """
    return _Figures


def mean_std(values):
    """Mean and sample standard deviation (ddof=1; 0 for a single value) as plain floats."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


def seed_from(*parts):
    """An int seed for scikit-learn-style ``random_state`` from several integers (one SeedSequence draw)."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0])


def wrap_seed(value):
    """A seed derived from the run's (``seed + k``, ``seed * 1000 + rep``) brought into ``[0, 2**32)``, the range of
    numpy's legacy seeding and of scikit-learn's ``random_state``: the same value wherever it already fits (the
    recorded runs' seeds are unchanged), where ``--seed 50000`` made Mroueh's xperm templates refuse 5000150000."""
    return int(value) % 2**32


def stratified(y, per_class, rng, pool=None):
    """Sorted indices of ``per_class`` distinct random members of every class of ``y[pool]`` (all rows if None).

    Classes are visited in sorted order and drawn with ``rng.choice(..., replace=False)``, so a given
    generator state always gives the same subset (the stored cells of the reproductions depend on it).
    """
    idx = np.arange(len(y)) if pool is None else np.asarray(pool)
    return np.sort(np.concatenate([rng.choice(idx[y[idx] == c], size=per_class, replace=False)
                                   for c in np.unique(y[idx])]))


def kfold_indices(n, k, seed):
    """``k`` (train, validation) index pairs of a shuffled k-fold split of ``range(n)``."""
    perm = np.random.RandomState(seed).permutation(n)
    parts = np.array_split(perm, k)
    return [(np.sort(np.concatenate(parts[:i] + parts[i + 1:])), np.sort(parts[i])) for i in range(k)]


def _fmt(v, spec):
    if v is None:
        return "—"
    if isinstance(v, (int, float, np.floating)):
        return f"{v:{spec}}"
    return str(v)


def headline_table(headline, digits=2, row_format=None):
    """Markdown table of ``headline`` cells: name, ours, paper, better, and whether ours meets the paper.

    Values are shown with ``digits`` decimals, or with the format spec that
    ``row_format(cell)`` returns for that row (None: the default).
    """
    lines = ["| cell | ours | paper | better | meets paper? |", "| --- | --- | --- | --- | --- |"]
    for h in headline:
        spec = (row_format(h) if row_format is not None else None) or f".{digits}f"
        ours, paper = h.get("ours"), h.get("paper")
        # the results page's verdict, so that the two cannot disagree (better="closer", tolerance)
        verdict = _verdict(h)
        meets = "—" if not verdict else "yes" if verdict.startswith(("meets", "matches")) else "no"
        lines.append(f"| {h['name']} | {_fmt(ours, spec)} | {_fmt(paper, spec)} | {h.get('better', '')} | {meets} |")
    return "\n".join(lines)
