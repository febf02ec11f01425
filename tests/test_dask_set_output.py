"""``set_output(transform="pandas")`` on a Dask array: scikit-learn's wrapper builds the DataFrame from the whole
lazy result, computing it into memory. It still works (the frame equals the in-memory features), and it says so
instead of silently dropping the "the data never reach your machine" of a Dask transform; its columns are floats,
not the objects that pandas blocks stacked by dask made (an audit, stop 64)."""
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem  # noqa: E402
from orbitkernels.groups import CyclicShift  # noqa: E402

X = np.random.default_rng(0).normal(size=(50, 8))


@pytest.mark.parametrize("cls, kw", [(OrbitFourierFeatures, {"n_components": 6}), (OrbitNystroem, {"n_components": 6}),
                                     (GroupCDFFeatures, {"n_templates": 3, "n_bins": 4})])
def test_pandas_output_of_a_dask_array_warns_that_it_computes_it_and_is_still_right(cls, kw):
    f = cls(CyclicShift(8), random_state=0, **kw).fit(X)
    ref = f.transform(X)
    f.set_output(transform="pandas")
    with pytest.warns(UserWarning, match=r"set_output\(transform='pandas'\) makes the features of a Dask array a "
                                         r"pandas DataFrame, computed whole") as record:
        out = f.transform(da.from_array(X, chunks=7))
    assert record[0].filename == __file__
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(f.get_feature_names_out())
    # each block was a DataFrame too, stacked into an object-dtype frame
    assert out.dtypes.unique().tolist() == [np.dtype(np.float64)]
    np.testing.assert_allclose(out.to_numpy(), ref, rtol=0, atol=1e-12)
    assert isinstance(f.transform(X), pd.DataFrame)  # the estimator's own configuration is untouched


def test_default_output_stays_lazy_and_quiet():
    f = OrbitFourierFeatures(CyclicShift(8), n_components=6, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = f.set_output(transform="default").transform(da.from_array(X, chunks=7))
    assert isinstance(out, da.Array)
