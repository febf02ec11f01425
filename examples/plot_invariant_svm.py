"""
Invariant SVM with transformations
==================================

Teo et al. 2007 learn invariances without enlarging the training set: the max-margin loss of
their Eq. (2) asks that *every* transformed copy of a training example keep its margin, and
:class:`~orbitkernels.models.InvariantSVC` trains it by column generation (Algorithm 1), adding
a transformed copy to the working set only when it violates the margin.

Here the transformations are the four one-pixel shifts of an image (the first four of Teo et
al.'s §5.1, made with :class:`~orbitkernels.groups.ImageTranslation`), and every test digit is
shifted by one pixel at random. Three RBF SVMs with the same ``C`` and ``gamma``:

* a standard SVM on the training digits (STD-SVM);
* a standard SVM on the training digits and all their shifted copies (virtual samples, VIR-SVM);
* the invariant SVM (Invar-SVM), which adds a shifted copy of a digit to its working set only
  when that copy violates the margin (column generation).

``transformations`` also takes a finite :class:`~orbitkernels.groups.Group` (every element is
then a transformation) or an infinite one with ``n_transformations`` sampled elements.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.svm import SVC

from orbitkernels.groups import Discrete, ImageTranslation
from orbitkernels.models import GroupElement, InvariantSVC

digits = load_digits()
# Pad to 10×10 so that a one-pixel shift never pushes ink out of the frame.
X = np.pad(digits.images / 16.0, ((0, 0), (1, 1), (1, 1))).reshape(len(digits.images), -1)
y = digits.target
rng = np.random.RandomState(0)
train = np.concatenate([rng.choice(np.flatnonzero(y == c), 10, replace=False) for c in range(10)])
test = np.setdiff1d(np.arange(len(X)), train)

translation = ImageTranslation((10, 10), shift=Discrete([-1.0, 0.0, 1.0]))
one_pixel = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])  # (rows, columns)
X_test_shifted = translation.act_each(X[test], one_pixel[rng.randint(4, size=len(test))])

# InvariantSVC always includes the identity; these four are the rest of the invariance set S.
transformations = [GroupElement(translation, e) for e in one_pixel]
print(f"{len(train)} training digits, {len(test)} shifted test digits")

# %%
# Training the three models
# -------------------------
# The virtual-sample SVM sees every shift of every training digit (5 × 100 rows); the invariant
# SVM sees the 100 digits and the four transformations.

C, gamma = 10.0, 0.1
results = {}

start = time.perf_counter()
std = SVC(C=C, gamma=gamma).fit(X[train], y[train])
results["STD-SVM"] = (std.score(X_test_shifted, y[test]), std.n_support_.sum(), time.perf_counter() - start)

start = time.perf_counter()
copies = translation.act(X[train], np.vstack([np.zeros((1, 2)), one_pixel]))  # (5, 100, 100)
vir = SVC(C=C, gamma=gamma).fit(copies.reshape(-1, X.shape[1]), np.tile(y[train], len(copies)))
results["VIR-SVM"] = (vir.score(X_test_shifted, y[test]), vir.n_support_.sum(), time.perf_counter() - start)

start = time.perf_counter()
# tol is the ε of Algorithm 1: a violated constraint joins the working set when it exceeds the
# digit's slack by more than tol. 0.1, looser than the default 1e-3, takes fewer passes and keeps
# this example quick.
invar = InvariantSVC(C=C, gamma=gamma, transformations=transformations, tol=0.1).fit(X[train], y[train])
results["Invar-SVM"] = (invar.score(X_test_shifted, y[test]), invar.n_support_, time.perf_counter() - start)
print(f"Invar-SVM: {invar.n_iter_} passes, converged: {invar.converged_}, "
      f"{invar.n_constraints_} constraints in the working sets")

for name, (accuracy, n_support, seconds) in results.items():
    print(f"{name:9s} accuracy on shifted digits {accuracy:.3f}, {n_support:4d} support vectors, {seconds:.1f} s")

# %%
# Knowing the shifts more than doubles the accuracy on shifted digits. The invariant SVM matches
# the virtual-sample SVM, with about as many support vectors: with 10 digits per class and an
# RBF kernel, most of the 500 copies (each digit and its four shifts) violate the margin at some
# pass, so the working sets end up holding most of them (each support vector of Invar-SVM is one
# of those copies). Teo et al. measure about half the support vectors of VIR-SVM on
# MNIST; our reproduction finds a ratio of 0.89 (see the :doc:`Teo et al. reproduction page
# </reproductions/teo2007>`).

fig, (ax_acc, ax_sv) = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
names = list(results)
ax_acc.bar(names, [results[n][0] for n in names], color=["C0", "C1", "C2"])
ax_acc.set_ylim(0, 1)
ax_acc.set_ylabel("accuracy on shifted test digits")
ax_sv.bar(names, [results[n][1] for n in names], color=["C0", "C1", "C2"])
ax_sv.set_ylabel("support vectors")
fig.suptitle("10 training digits per class, one-pixel shifts", fontsize=10)
plt.show()
