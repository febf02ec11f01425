"""The README's performance sentences are the committed measurements (results/bench/*.json), not prose."""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _flat(text):
    return " ".join(text.split())


def test_readme_cdf_pooling_claims_are_the_committed_measurements():
    readme = _flat((ROOT / "README.md").read_text())
    gemm = json.loads((ROOT / "results/bench/gemm_peak.json").read_text())["results"]["gicdf_50_bins"]
    m = re.search(r"GICDF's transform runs at (\d+) % of a same-shape sgemm with it against (\d+) % without", readme)
    assert m, "the README should state GICDF's share of sgemm with and without the fused kernels"
    assert int(m[1]) == round(100 * gemm["share_of_peak_transform"])
    assert int(m[2]) == round(100 * gemm["share_of_peak_transform_fused_kernels_off"])
    probe = json.loads((ROOT / "results/bench/cdf_pool_kernel_probe.json").read_text())
    m = re.search(r"the fused CDF pooling alone is ([\d.]+)x the NumPy pooling", readme)
    assert m, "the README should state the fused CDF pooling's speed-up"
    assert float(m[1]) == round(probe["speedup_vs_numpy"]["fused"], 1)
    assert probe["features_identical"] is True


def test_user_guide_invariant_svc_fit_times_are_the_committed_measurements():
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    rows = json.loads((ROOT / "results/bench/invariant_svm.json").read_text())["results"]["per_k"]
    m = re.search(r"a fit takes (\d+) s with (\d+) shifts and (\d+) s with (\d+)", guide)
    assert m, "the user guide should state InvariantSVC's measured fit times"
    assert [(int(m[1]), int(m[2])), (int(m[3]), int(m[4]))] == [
        (round(r["fit_s"]["direct"]), r["n_transformations"]) for r in rows]
    assert all(r["identical"] for r in rows)
