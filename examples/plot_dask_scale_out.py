"""
Scaling out on a local Dask cluster
===================================

The feature maps and the ridge models take row-chunked :mod:`dask.array` inputs and return
dask arrays: each block of rows is mapped on a worker with the transformer's own in-memory
``transform`` (a feature of a row depends on that row only), and
:class:`~orbitkernels.models.DistributedRidgeClassifier` fits regularised least squares from
normal equations accumulated block by block (a tree reduction), choosing the penalty α on
validation data without bringing the data to the client.

The same model is fitted in memory and on a local cluster of two single-threaded workers, for
several chunk sizes. The chosen α, the validation errors and the predictions are the same; the
features agree to rounding. The cluster here runs its workers as threads of this process
(``processes=False``) so that the example runs anywhere; for real work use worker processes, or
point a :class:`distributed.Client` at a real scheduler (see :doc:`/scaling_out`).
"""

import time

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import ImageRotation
from orbitkernels.models import DistributedRidgeClassifier

digits = load_digits()
X = np.pad(digits.images / 16.0, ((0, 0), (2, 2), (2, 2))).reshape(len(digits.images), -1)
rotation = ImageRotation((12, 12))
# Every digit turned by a random angle: the training set carries the nuisance too.
X = rotation.act_each(X, rotation.sample(len(X), random_state=0, sampling="iid"))
X_train, X_rest, y_train, y_rest = train_test_split(X, digits.target, test_size=0.4, random_state=0)
X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0)

features = OrbitFourierFeatures(rotation, gamma=0.05, n_components=300, n_group_samples=32, random_state=0)
# A finer grid than the default (1e-3 ... 1e3), reaching lower: the validation curve below then shows
# its minimum inside the grid rather than at its edge.
alphas = np.logspace(-6, 2, 17)

# %%
# In memory
# ---------

# The first transform of a process pays one-off set-up costs; an untimed one keeps them out of the
# wall times compared below.
features.fit(X_train).transform(X_train)
start = time.perf_counter()
F = features.fit(X_train).transform
reference = DistributedRidgeClassifier(alphas=alphas).fit(F(X_train), y_train, X_val=F(X_val), y_val=y_val)
pred_memory = reference.predict(F(X_test))
seconds = {"in memory": time.perf_counter() - start}
print(f"in memory: alpha {reference.alpha_:g}, test accuracy {np.mean(pred_memory == y_test):.3f}, "
      f"{seconds['in memory']:.2f} s")

# %%
# On the cluster, for three chunk sizes
# -------------------------------------
# ``fit`` on a dask array is the in-memory fit on (here) all rows, so the templates and rotations
# are bit-identical; ``transform`` then returns a dask array, evaluated by the workers.

validation_errors = {"in memory": reference.validation_errors_}
feature_gap = {}
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
        Client(cluster):
    for rows in (100, 300, 1000):
        start = time.perf_counter()
        Xtr, Xva, Xte = (da.from_array(x, chunks=(rows, -1)) for x in (X_train, X_val, X_test))
        ytr, yva = (da.from_array(y, chunks=rows) for y in (y_train, y_val))
        features.fit(Xtr)
        model = DistributedRidgeClassifier(alphas=alphas).fit(features.transform(Xtr), ytr,
                                                              X_val=features.transform(Xva), y_val=yva)
        pred = model.predict(features.transform(Xte)).compute()
        label = f"dask, {rows}-row chunks"
        seconds[label] = time.perf_counter() - start
        validation_errors[label] = model.validation_errors_
        feature_gap[label] = float(np.abs(features.transform(Xte).compute() - F(X_test)).max())
        same_curve = np.array_equal(model.validation_errors_, reference.validation_errors_)
        print(f"{label}: alpha {model.alpha_:g}, test accuracy {np.mean(pred == y_test):.3f}, "
              f"{seconds[label]:.2f} s, same validation errors: {same_curve}, "
              f"same predictions: {np.array_equal(pred, pred_memory)}, "
              f"largest feature difference {feature_gap[label]:.1e}")

# %%
# The validation curves lie on top of each other (the same α is chosen). The right panel shows
# each run's wall time on the machine that built this page: at this tiny size the work takes a
# fraction of a second, so the times mostly show what the task graph costs. Dask pays off when
# the data do not fit on one machine, not here.

fig, (ax_val, ax_time) = plt.subplots(1, 2, figsize=(9.5, 3.6), layout="constrained")
for (label, errors), style in zip(validation_errors.items(), ["-", "--", ":", "-."]):
    ax_val.plot(alphas, np.asarray(errors).ravel(), style, marker="o", markersize=3, label=label)
ax_val.set_xscale("log")
ax_val.set_xlabel("α")
ax_val.set_ylabel("validation error")
ax_val.legend(fontsize=8)
ax_time.barh(list(seconds), list(seconds.values()))
ax_time.set_xlabel("seconds (features + fit + predict)")
plt.show()
