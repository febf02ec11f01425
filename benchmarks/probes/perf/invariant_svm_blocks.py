"""Probe: the size of InvariantSVC's joint block steps (``invariant_svm._JOINT_BLOCK_VARS``).

Where the union of working sets outgrows ``qp_chunk_size``, column generation re-optimises it by block steps over the
most violating examples, their working sets together up to ``min(qp_chunk_size, _JOINT_BLOCK_VARS)`` variables a
step (stop 62; before, one example a step). A larger block couples more of the dual per step, but clarabel's time
grows as the cube of a dense block. This fits the ``invariant_svm`` benchmark's problem (200 of scikit-learn's 8x8
digits, K = 10 and 50 sampled shifts, clarabel directly, the estimator's defaults otherwise) at several block sizes,
one after the other, one BLAS thread, and records fit time, passes, convergence and duality gap. Usage::

    OMP_NUM_THREADS=1 python benchmarks/probes/perf/invariant_svm_blocks.py

Writes ``results/bench/invariant_svm_blocks_probe.json``.
"""

import argparse
import os
import time
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from orbitkernels.groups import ImageTranslation, Normal
from orbitkernels.models import InvariantSVC, invariant_svm
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/invariant_svm_blocks_probe.json"


def fit(X, y, k, block_vars):
    saved = invariant_svm._JOINT_BLOCK_VARS
    invariant_svm._JOINT_BLOCK_VARS = block_vars
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            t0 = time.perf_counter()
            model = InvariantSVC(transformations=ImageTranslation((8, 8), shift=Normal(1.0)), n_transformations=k,
                                 qp_solver="clarabel", random_state=0).fit(X, y)
            seconds = time.perf_counter() - t0
    finally:
        invariant_svm._JOINT_BLOCK_VARS = saved
    return {"fit_s": round(seconds, 2), "passes": int(model.n_iter_), "converged": bool(model.converged_),
            "duality_gap": round(model.primal_objective_ - model.dual_objective_, 5),
            "bound_1_5_C_m_tol": 1.5 * model.C * len(X) * model.tol,
            "convergence_warnings": len([w for w in caught if issubclass(w.category, ConvergenceWarning)])}


def main(sizes=(100, 150, 300), ks=(10, 50)):
    X, y = load_digits(return_X_y=True)
    X, y = X[:200] / 16.0, y[:200]
    res = {}
    with threadpool_limits(1):
        for k in ks:
            for size in sizes:
                key = f"K = {k}, blocks of {size} variables"
                res[key] = fit(X, y, k, size)
                print(key, res[key], flush=True)
    atomic_write_json(OUT, {"probe": __doc__.split("\n")[0], "script": "benchmarks/probes/perf/invariant_svm_blocks.py",
                            "default": invariant_svm._JOINT_BLOCK_VARS, "load_avg_1min": os.getloadavg()[0],
                            "results": res})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 150, 300])
    args = parser.parse_args()
    main(tuple(args.sizes))
