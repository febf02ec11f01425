"""Probe (issue #16): a chunk's large arrays kept from chunk to chunk (the engine's workspace) or allocated afresh.

The engine computes each chunk's similarities (GEMM paths) or their spectrum (FFT paths) in one array of tens to
hundreds of MB: 52 MB for the 99 digits of a chunk of the default rotation estimator. glibc serves every
allocation above 32 MB with a fresh ``mmap`` whose pages fault in, zeroed, on first write, so an array per chunk
paid that in every chunk of every transform, and ``OrbitFeaturesBase._map`` called the engine once per block of rows
(a new array each time). The benchmarks did not see it: they run on a warm heap (``bench._warm_heap``: glibc told to
keep freed pages), which a user's process does not have. The variant kept (``_engine._Workspace``): one buffer per
role for a whole transform, which the products write into (``out=``).

This probe runs with glibc's *default* allocator (what a user gets), in one process, round-robin rounds (best of
each), one thread, 5 rounds, 512 MNIST digits (1024 for GICDF): the default rotation estimator, the Rotated MNIST full
configuration's shape (polar path, s = 7000, 100 angles) and GICDF's MNIST configuration (template GEMM path,
500 templates x 64 rotations x translations, 50 bins), each with the workspace and with a new array per chunk
(``NumpyBackend.reuses_buffers = False``, the engine before), each estimator's two variants in their own rounds. Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/chunk_workspace.py

Writes ``results/bench/chunk_workspace_probe.json`` (µs per image; the features of both variants are the same
bits, checked). The recorded run is of commit f2a526b, whose FFT chunks held 102 digits at s = 2000 and 18 at
s = 7000 (1.11x / 1.10x / 1.04x). Since a chunk is sized by its spectrum alone (``spectrum_planes.py``: 491 and 93
digits) a 512-digit transform is one or a few chunks and the workspace saves less there (a rerun at cb26d0e:
1.005x / 1.056x / 1.013x); it saves a mapping per chunk in longer transforms.
"""
import argparse

from threadpoolctl import threadpool_limits

import numpy as np

from orbitkernels.bench import _best_interleaved, _mnist, _numpy_backend_off, _spectral_probe_estimators, _write_probe
from orbitkernels.features import GroupCDFFeatures
from orbitkernels.groups import ImageRotation, ImageTranslation, Uniform


def _pretouch(nbytes=3 * 2**30):
    """Touch and free ``nbytes``: on this project's virtual machine the host backs guest memory lazily, and the
    first touch of a page the process never had costs ~10x a page fault on a page it freed (measured: 146-337 ms
    against 20 ms for 207 MB), so a variant that holds more memory at once draws more never-backed pages for the
    same allocations; recycled pages make the variants' page faults cost what they cost on a machine without it."""
    a = np.empty(nbytes, np.uint8)
    a[:: 4096] = 1
    del a


def main():
    _pretouch()
    n = 512
    X = _mnist(2 * n, rotated=True)
    ests = {k: (est, X[:n]) for k, est in _spectral_probe_estimators(X[:8]).items()}
    g = ImageRotation((28, 28), angle=Uniform(-np.pi / 9, np.pi / 9)) * ImageTranslation((28, 28), Uniform(-3, 3))
    gicdf = GroupCDFFeatures(g, n_templates=500, n_bins=50, n_group_samples=64, sampling="iid", dtype="float32",
                             random_state=0).fit(X[:8])
    ests["gicdf MNIST CDF(50, 500) x 64 elements"] = (gicdf, X)

    times, outs = {}, {}
    for e, (est, Xe) in ests.items():
        # each estimator's variants in their own rounds: the first transform after another estimator's pays
        # for the pages that one freed (GICDF measured 604 against 735 us per image in whichever variant came
        # first after the Rotated MNIST shape, in either order)
        fns = {f"{e} | workspace": lambda est=est, Xe=Xe: est.transform(Xe),
               f"{e} | a new array per chunk (before)": _numpy_backend_off("reuses_buffers",
                                                                          lambda est=est, Xe=Xe: est.transform(Xe))}
        for fn in fns.values():  # the per-precision caches and the JIT, outside the timing
            fn()
        t, o = _best_interleaved(fns, repeat=5)
        times.update(t)
        outs.update(o)
    for e in ests:
        assert np.array_equal(outs[f"{e} | workspace"], outs[f"{e} | a new array per chunk (before)"]), e
    rows = {e: len(Xe) for e, (_, Xe) in ests.items()}
    res = {"us_per_image": {k: round(t / rows[k.split(" | ")[0]] * 1e6, 1) for k, t in times.items()},
           "speedup": {e: round(times[f"{e} | a new array per chunk (before)"] / times[f"{e} | workspace"], 3)
                       for e in ests},
           "same_bits": True, "allocator": "glibc default (no mallopt)", "n_images": rows}
    _write_probe(res, "benchmarks/probes/perf/chunk_workspace.py")
    print(res["speedup"])


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
