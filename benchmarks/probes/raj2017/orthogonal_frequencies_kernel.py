"""Raj et al. 2017, Eq. 7: how much closer to the kernel are orthogonal random frequencies, without and with a group?

Orthogonal random features (Yu et al. 2016; ``OrbitFourierFeatures(frequencies="orthogonal")``) draw every frequency
from the Gaussian kernel's spectral law N(0, 2γI), as i.i.d. random Fourier features do, but make the frequencies of
each block of d orthogonal. On 300 of scikit-learn's 8×8 digits (zero-padded to 12×12, d = 144, pixels / 16), γ =
1 / median squared distance, this probe measures the relative Frobenius error ||ΦΦᵀ - K|| / ||K|| of the feature
Gram matrix against the kernel it estimates, for s = d/2, d, 2d and 4d frequencies, over 20 draws of each law:
without a group (K the Gaussian kernel) and with the rotation group's 12 rotations by multiples of 30° on the
bilinear-warp path (K the exact orbit kernel E_{g,g'} k(g x, g' x') over the same 12 elements, ``HaarKernel``). It
is the measurement behind ``frequencies="auto"`` taking orthogonal frequencies for the Gaussian kernel with a group
as well as without. Run from the repository root:
``python benchmarks/probes/raj2017/orthogonal_frequencies_kernel.py`` (under a minute); each
finished variant is written at once to ``results/raj2017/orthogonal_frequencies_kernel_probes.json`` and skipped
on a rerun.
"""
import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from orbitkernels.experiments.report import ProbeFile
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import ImageRotation
from orbitkernels.kernels import HaarKernel

OUT = Path("results/raj2017/orthogonal_frequencies_kernel_probes.json")
N, DRAWS, ANGLES = 300, 20, 12


def main():
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/raj2017/orthogonal_frequencies_kernel.py", experiment="kernel_approx",
                       n_rows=N, draws=DRAWS)
    digits = load_digits()
    X = np.pad(digits.images[:N] / 16.0, ((0, 0), (2, 2), (2, 2))).reshape(N, -1)
    d = X.shape[1]
    sq = (X * X).sum(1)
    D2 = sq[:, None] + sq[None, :] - 2 * X @ X.T
    gamma = 1.0 / float(np.median(D2[np.triu_indices(N, 1)]))
    group = ImageRotation((12, 12), n_angles=ANGLES)
    exact = {"no group": rbf_kernel(X, gamma=gamma)}

    for case in ("no group", f"{ANGLES} rotations"):
        for s in (d // 2, d, 2 * d, 4 * d):
            def run(case=case, s=s):
                out = {"s": s, "d": d, "case": case}
                for law in ("iid", "orthogonal"):
                    errs = []
                    for seed in range(DRAWS):
                        g = None if case == "no group" else group
                        f = OrbitFourierFeatures(g, gamma=gamma, n_components=s, frequencies=law, random_state=seed,
                                                 **({} if g is None else {"fast_path": "gemm"})).fit(X)
                        if case not in exact:
                            exact[case] = HaarKernel(group, "rbf", gamma=gamma, elements=f.group_elements_)(X)
                        F = f.transform(X)
                        K = exact[case]
                        errs.append(float(np.linalg.norm(F @ F.T - K) / np.linalg.norm(K)))
                    out[f"{law}_rel_error"] = float(np.mean(errs))
                    out[f"{law}_rel_error_sd"] = float(np.std(errs))
                out["orthogonal_over_iid"] = out["orthogonal_rel_error"] / out["iid_rel_error"]
                return out
            probes.record(f"{case}, s={s}", run)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
