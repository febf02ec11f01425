"""Run the engine benchmarks and write results/bench/<name>.json.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ORBITKERNELS_DATA=/path/to/data \
        python benchmarks/run_benchmarks.py [names...] [--quick] [--out-dir DIR]

The benchmarks themselves live in :mod:`orbitkernels.bench` (also behind
``orbitkernels bench``); each compares methods in one process and reports
ratios, with the load average recorded, because the machine may be shared.
``ORBITKERNELS_BENCH_THREADS`` sets the BLAS threads (default 1).
"""
import argparse
import json

from orbitkernels.bench import BENCHMARKS, run_benchmarks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*",
                    help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    ap.add_argument("--quick", action="store_true", help="small sizes (a minute or two in all)")
    ap.add_argument("--out-dir", default="results/bench")
    a = ap.parse_args(argv)
    res = run_benchmarks(a.names or None, quick=a.quick, out_dir=a.out_dir)
    print(json.dumps({k: v["results"] for k, v in res.items()}, indent=1, default=str))


if __name__ == "__main__":
    main()
