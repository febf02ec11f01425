"""Probe (issue #16): the FFT paths' floor with other FFT libraries than SciPy's pocketfft.

The inverse real FFTs are most of the floor of the polar / cyclic paths (``bench._cos_bound(fft=True)``): s spectra
of r // 2 + 1 frequencies per image, inverted along the contiguous last axis. This probe times that step alone, per
image, for the default rotation estimator's shape (blocks of 4 rows x s = 2000 templates, r = 64 angles) and the
Rotated MNIST full configuration's (1 row x s = 7000, r = 100), complex64 -> float32, one thread, with each library
that is installed: SciPy's pocketfft (the NumPy back-end's), Intel MKL through ``mkl_fft`` and FFTW through
``pyfftw`` (plans made once, outside the timing, with ``FFTW_MEASURE`` and ``FFTW_PATIENT``). Usage (in an
environment with the libraries to compare; each missing one is skipped)::

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/probes/perf/fft_libraries.py [output.json]

Writes ``results/bench/fft_libraries_probe.json`` by default (µs per image, best of 5 rounds of 50 calls, and the
largest difference from pocketfft's values).
"""
import argparse
import os
import time

import numpy as np
import scipy.fft

SHAPES = {"default s=2000 r=64 (4-row blocks)": (4, 2000, 64), "rotated_mnist_full s=7000 r=100 (1 row)": (1, 7000, 100)}


def _best_us(fn, rows, rounds=5, calls=50):
    fn()
    best = np.inf
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best / rows * 1e6


def main(path="results/bench/fft_libraries_probe.json"):
    rng = np.random.default_rng(0)
    res = {"us_per_image": {}, "max_abs_diff_vs_pocketfft": {}, "versions": {"scipy": scipy.__version__}}
    for label, (rows, s, r) in SHAPES.items():
        nf = r // 2 + 1
        C = (rng.standard_normal((rows * s, nf)) + 1j * rng.standard_normal((rows * s, nf))).astype(np.complex64)
        ref = scipy.fft.irfft(C, r, axis=-1, workers=1)
        out = {"pocketfft (scipy.fft)": _best_us(lambda: scipy.fft.irfft(C, r, axis=-1, workers=1), rows)}
        diffs = {}
        try:
            import mkl_fft

            out["MKL (mkl_fft)"] = _best_us(lambda: mkl_fft.irfft(C, n=r, axis=-1), rows)
            diffs["MKL (mkl_fft)"] = float(np.abs(mkl_fft.irfft(C, n=r, axis=-1) - ref).max())
            res["versions"]["mkl_fft"] = getattr(mkl_fft, "__version__", "?")
        except ImportError:
            pass
        try:
            import pyfftw

            a = pyfftw.empty_aligned(C.shape, "complex64")
            b = pyfftw.empty_aligned((rows * s, r), "float32")
            for effort in ("FFTW_MEASURE", "FFTW_PATIENT"):
                plan = pyfftw.FFTW(a, b, axes=(-1,), direction="FFTW_BACKWARD", flags=(effort, "FFTW_DESTROY_INPUT"),
                                   threads=1)

                def run(plan=plan):  # c2r destroys its input: each call copies the spectrum in, as the engine would
                    a[...] = C
                    plan()
                key = f"FFTW (pyfftw, {effort})"
                out[key] = _best_us(run, rows)
                run()
                diffs[key] = float(np.abs(b - ref).max())  # calling the plan normalises the inverse (1/r)
            res["versions"]["pyfftw"] = pyfftw.__version__
        except ImportError:
            pass
        res["us_per_image"][label] = {k: round(v, 1) for k, v in out.items()}
        res["max_abs_diff_vs_pocketfft"][label] = diffs
    res.update({"load_avg_1min": round(os.getloadavg()[0], 2), "threads": 1,
                "script": "benchmarks/probes/perf/fft_libraries.py"})
    import json

    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    for label, v in res["us_per_image"].items():
        print(label, v)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", nargs="?", default="results/bench/fft_libraries_probe.json",
                    help="the JSON file to write (default: %(default)s)")
    main(ap.parse_args().output)
