"""Probe: InvariantSVC's AlmostSolved block points taken whole or by their exact line search.

On a low-rank linear kernel (120 rows of 16 Gaussian features, three classes, every cyclic shift: the problem of
``tests/test_invariant_svm_gap.py``), clarabel leaves some block QPs AlmostSolved. Such a point was taken whole where
it went down and refused otherwise, and a refused block was halved and solved again; which blocks are refused
depends on round-off, so the same fit took 674 block QPs with the wheels of today and 5,384 (15 s) under numpy 1.24
on two BLAS threads. With ``invariant_svm._ALMOST_SOLVED_LINE_SEARCH`` the point is a direction and the step is the
objective's minimum along it (``_descent_fraction``). This fits the problem for several seeds both ways, one after
the other, and records the block QPs, passes, duality gap and fit time of each. Usage::

    OPENBLAS_NUM_THREADS=2 python benchmarks/probes/perf/invariant_svm_almost_solved.py

Writes ``results/bench/invariant_svm_almost_solved_probe.json``.
"""

import argparse
import time
import warnings

import numpy as np
import scipy
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_info

from orbitkernels.groups import CyclicShift
from orbitkernels.models import InvariantSVC, invariant_svm
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/invariant_svm_almost_solved_probe.json"


def fit_once(seed, line_search):
    rs = np.random.RandomState(seed)
    X = rs.randn(120, 16)
    y = (X[:, :4].sum(1) > 0).astype(int) + (X[:, 4] > 1)
    counts = {"qps": 0, "almost_solved": 0}
    block = invariant_svm._clarabel_block

    def counted(*args, **kwargs):
        out = block(*args, **kwargs)
        counts["qps"] += 1
        counts["almost_solved"] += int(isinstance(out, tuple) and not out[1])
        return out

    invariant_svm._clarabel_block, invariant_svm._ALMOST_SOLVED_LINE_SEARCH = counted, line_search
    try:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model = InvariantSVC(kernel="linear", transformations=CyclicShift(16), tol=1e-4).fit(X, y)
        seconds = time.perf_counter() - t0
    finally:
        invariant_svm._clarabel_block, invariant_svm._ALMOST_SOLVED_LINE_SEARCH = block, True
    return {"seed": seed, "line_search": line_search, "block_qps": counts["qps"],
            "almost_solved": counts["almost_solved"], "passes": int(model.n_iter_), "converged": bool(model.converged_),
            "duality_gap": float(model.primal_objective_ - model.dual_objective_),
            "bound": float(1.5 * model.C * len(X) * model.tol), "fit_seconds": round(seconds, 3)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    rows = [fit_once(seed, line_search) for seed in range(args.seeds) for line_search in (False, True)]
    summary = {}
    for line_search in (False, True):
        mine = [r for r in rows if r["line_search"] == line_search]
        summary["line_search" if line_search else "whole_or_refused"] = {
            "block_qps": sum(r["block_qps"] for r in mine), "most_block_qps": max(r["block_qps"] for r in mine),
            "fit_seconds": round(sum(r["fit_seconds"] for r in mine), 2),
            "all_within_bound": all(r["converged"] and 0 <= r["duality_gap"] <= r["bound"] for r in mine)}
    blas = [{k: lib.get(k) for k in ("internal_api", "version", "num_threads")} for lib in threadpool_info()]
    record = {"numpy": np.__version__, "scipy": scipy.__version__, "blas": blas, "rows": rows, "summary": summary}
    atomic_write_json(args.out, record)
    for name, s in summary.items():
        print(f"{name}: {s}")


if __name__ == "__main__":
    main()
