"""Rotated MNIST (Raj et al. 2017, Table 2): LGIKA (RF) on the polar path with all 64 grid rotations at D = 14000.

D = 14000 features are the paper's s = 7k templates (cos and sin); otherwise ``mnist_polar.py``: one layer, the law
and γ the 'reduced' run selected (uniform, γ factor 2), λ on the 2k validation split, refit on train + validation,
one JSON line with the accuracy on the 50k regenerated test digits (feature_s 134 s, total_s 642 s on a shared 2-core
CPU in the recorded run). Cited by results/raj2017/rotated_mnist_trials.json ("scripts", "runs", "description"),
which docs/reproductions/raj2017.md renders.

Probe recorded in its results file (the "scripts" entry of results/raj2017/*_trials.json), kept as it was run
on 2026-11-22 (library 0.1.0); run from the repository root with ORBITKERNELS_DATA set. Later API changes may
need small edits: the recorded numbers are what it printed then. Since then it answers --help through argparse and
runs ``mnist_polar.py``'s main at D = 14000, which was this script's code with D = 14000 written in (the recorded
text is in the results file); the computation is unchanged.
"""
import argparse

from mnist_polar import main

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main(14000)
