"""
Rotation-invariant digit recognition
====================================

Train on upright handwritten digits and recognise rotated ones. Plain random Fourier features
(scikit-learn's :class:`~sklearn.kernel_approximation.RBFSampler`) only know the digits in the
pose they were shown; orbit features average over the rotation group, so a rotated digit gets
(nearly) the features of the upright one:

* :class:`~orbitkernels.features.OrbitFourierFeatures`: random Fourier features of the orbit
  embedding (Raj et al. 2017, Eq. 7);
* :class:`~orbitkernels.features.GroupCDFFeatures`: the empirical CDF of dot products with
  rotated random templates (GICDF, Mroueh et al. 2015, §2).

The data are scikit-learn's bundled 8×8 digits, zero-padded to 12×12 so that a rotation keeps
the whole digit in the frame.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import RidgeClassifierCV
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures
from orbitkernels.groups import ImageRotation

digits = load_digits()
X = np.pad(digits.images / 16.0, ((0, 0), (2, 2), (2, 2))).reshape(len(digits.images), -1)
X_train, X_test, y_train, y_test = train_test_split(X, digits.target, test_size=0.4, random_state=0)

# Every angle, uniform: the Haar measure of SO(2). ``act_each`` turns row i by angle i.
rotation = ImageRotation((12, 12))
angles = rotation.sample(len(X_test), random_state=1, sampling="iid")
X_test_rotated = rotation.act_each(X_test, angles)

# %%
# Three feature maps, one ridge classifier
# ----------------------------------------
# The ridge penalty is chosen by leave-one-out on the (upright) training digits only.

alphas = np.logspace(-4, 2, 7)
models = {
    "plain RFF": RBFSampler(gamma=0.05, n_components=1000, random_state=0),
    "orbit RFF (Raj)": OrbitFourierFeatures(rotation, gamma=0.05, n_components=1000, random_state=0),
    "GICDF (Mroueh)": GroupCDFFeatures(rotation, n_templates=50, n_bins=20, random_state=0),
}
scores = {}
for name, features in models.items():
    start = time.perf_counter()
    model = make_pipeline(features, RidgeClassifierCV(alphas=alphas)).fit(X_train, y_train)
    scores[name] = (model.score(X_test, y_test), model.score(X_test_rotated, y_test))
    print(f"{name:16s} upright test {scores[name][0]:.3f}   rotated test {scores[name][1]:.3f}"
          f"   ({time.perf_counter() - start:.1f} s)")

# %%
# What the classifiers saw, and how they did
# ------------------------------------------
# Plain features lose most of their accuracy on rotated digits; both orbit maps lose only a few
# hundredths of theirs (GICDF, at these sizes, is the least accurate on upright digits).

fig = plt.figure(figsize=(9, 4.2), layout="constrained")
left, right = fig.subfigures(1, 2, width_ratios=[1, 1.4])
axes = left.subplots(3, 4)
for k, ax in enumerate(axes.flat):
    image = (X_test if k < 4 else X_test_rotated)[k % 4 + 4 * (k >= 8)]
    ax.imshow(image.reshape(12, 12), cmap="gray_r")
    ax.set_axis_off()
left.suptitle("upright (top row) and rotated test digits", fontsize=9)

ax = right.subplots()
names = list(scores)
position = np.arange(len(names))
ax.bar(position - 0.2, [scores[n][0] for n in names], width=0.4, label="upright test digits")
ax.bar(position + 0.2, [scores[n][1] for n in names], width=0.4, label="rotated test digits")
ax.set_xticks(position, names)
ax.set_ylabel("accuracy (trained on upright digits)")
ax.set_ylim(0, 1)
ax.legend(loc="lower right")
plt.show()
