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


def test_user_guide_gpu_claims_are_the_committed_gpu_check():
    """The user guide's GPU paragraph quotes benchmarks/gpu_check.py's committed run (results/bench/gpu.json)."""
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    rec = json.loads((ROOT / "results/bench/gpu.json").read_text())
    rows = {r["estimator"].split(",")[0].split("(")[0]: r for r in rec["throughput"]}
    rot, cdf = rows["default ImageRotation"], rows["GICDF"]
    m = re.search(r"the default rotation estimator \(2000 frequencies, 64 rotations\) maps (\d+) images/s, "
                  r"([\d.]+)x NumPy on the same machine's (\d+) cores, with features equal to NumPy's to ([\d.e-]+) "
                  r"in float32", guide)
    assert m, "the user guide should quote the default rotation estimator's GPU throughput"
    assert int(m[1]) == round(rot["torch_gpu_images_per_s"]) and float(m[2]) == round(rot["gpu_over_numpy"], 1)
    assert int(m[3]) == rec["cpu_count"]
    fourier32 = max(r["max_abs_diff"] for r in rec["agreement"] if r["map"] == "fourier" and r["dtype"] == "float32")
    assert float(m[4]) == float(f"{fourier32:.0e}")
    m = re.search(r"GICDF with 50 bins and 500 templates maps (\d+) images/s there, ([\d.]+)x NumPy\. Its 50,500 "
                  r"features per image were its bound", guide)
    assert m, "the user guide should quote GICDF's GPU throughput"
    assert int(m[1]) == round(cdf["torch_gpu_images_per_s"]) and float(m[2]) == round(cdf["gpu_over_numpy"], 1)
    assert cdf["gpu_over_numpy"] > 1  # "were its bound": the GPU now beats NumPy's 16 cores on GICDF
    pool = next(r for r in rec["pooling"] if r["shape"] == [2048, 500, 64] and r["weights"] == "equal")
    m = re.search(r"GICDF's CDF pooling alone takes ([\d.]+) ms for 2048 images' ([\d.]+) million projections", guide)
    assert m and float(m[1]) == round(1000 * pool["sorted_s"], 1)
    assert float(m[2]) == round(2048 * 500 * 64 / 1e6, 1)
    assert all(r["max_abs_diff"] == 0 for r in rec["agreement"] if r["map"] == "gicdf"), "GICDF bit for bit"
    readme = _flat((ROOT / "README.md").read_text())
    m = re.search(r"on an H100 the default rotation estimator maps (\d+) images/s, ([\d.]+)x NumPy on that "
                  r"machine's (\d+) cores, and GICDF ([\d.]+)x", readme)
    assert m, "the README should quote the GPU check's default rotation estimator and GICDF"
    assert (int(m[1]), float(m[2]), int(m[3])) == (round(rot["torch_gpu_images_per_s"]),
                                                    round(rot["gpu_over_numpy"], 1), rec["cpu_count"])
    assert float(m[4]) == round(cdf["gpu_over_numpy"], 1)
    assert "H100" in rec["gpu"]


def test_readme_thread_claims_are_the_committed_split_products_probe():
    """The README's figures for the default rotation estimator on this machine's cores are the recorded run of
    benchmarks/probes/perf/split_products.py, whose threaded features equal one thread's."""
    readme = _flat((ROOT / "README.md").read_text())
    probe = json.loads((ROOT / "results/bench/split_products_probe.json").read_text())
    m = re.search(r"On this project's two cores the default rotation estimator runs ([\d.]+)x faster than on one, "
                  r"where the products on BLAS's threads gave ([\d.]+)x \(`python benchmarks/probes/perf/"
                  r"split_products.py`, the recorded run; ([\d.]+)-([\d.]+)x over the products on BLAS's threads", readme)
    assert m, "the README should quote the split_products probe"
    user = probe["speedup_over_1_thread"]["user default s=2000 r=64 (cos, sin)"]
    assert probe["cores"] == 2
    assert float(m[1]) == round(user["products split"], 2) and float(m[2]) == round(user["before"], 2)
    lo, hi = float(m[3]), float(m[4])  # the range over the runs holds the recorded one
    assert all(lo <= round(v, 2) <= hi for v in probe["speedup_split_vs_before"].values())
    assert not any(probe["max_abs_diff_vs_1_thread"].values())
    shares = probe["default_pooling_threads_cpu_over_wall"]
    assert min(shares.values()) < 0.75 < 0.95 < max(shares.values())


def test_nystroem_inverse_sqrt_claims_are_the_committed_probe():
    """The user guide's figures for K_ZZ^{-1/2} on a GPU are benchmarks/probes/perf/nystroem_inverse_sqrt.py's."""
    probe = json.loads((ROOT / "results/bench/nystroem_inverse_sqrt_probe.json").read_text())
    top = probe["sizes"]["10000"]
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    m = re.search(r"at 10000 landmarks, Raj et al.'s number, that took ([\d.]+) s on an (\w+) against ([\d.]+) s for "
                  r"the SVD on the same machine's (\d+) cores", guide)
    assert m, "the user guide should state the measured eigendecomposition and SVD times"
    assert (float(m[1]), float(m[3]), int(m[4])) == (round(top["torch_eigh_s"], 1), round(top["numpy_svd_s"], 1),
                                                     probe["cpu_count"])
    assert m[2] in probe["device"] and top["max_rel_diff"] < 1e-10  # the same matrix


def _times_are_the_runs(runs, key, shape, f64, f32):
    """(new, old, ratio) as quoted for float64 and float32 are the run's, keyed ``key.format(dtype)``, of
    ``shape`` (molecules, landmarks, sortings)."""
    for dtype, (new, old, ratio) in (("float64", f64), ("float32", f32)):
        run = runs[key.format(dtype)]
        assert (run["rows"], run["landmarks"], run["r"]) == shape
        assert (float(new), float(old), float(ratio)) == (round(run["product_form_s"], 2),
                                                          round(run["sklearn_pairwise_s"], 2), run["ratio"])


def test_data_path_gaussian_claims_are_the_committed_probe():
    """The user guide's CPU and GPU figures for the data side's Gaussian, and the precision the map picks by itself,
    are benchmarks/probes/perf/data_path_rbf.py's."""
    probe = json.loads((ROOT / "results/bench/data_path_rbf_probe.json").read_text())
    runs, auto = probe["runs"], probe["automatic_precision"]
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    m = re.search(r"on one CPU core at QM7's shape \((\d+) molecules, (\d+) landmarks, (\d+) sortings\) the transform "
                  r"took ([\d.]+) s against ([\d.]+) s in float64 \(([\d.]+)x\) and ([\d.]+) s against ([\d.]+) s in "
                  r"float32 \(([\d.]+)x\), the same features to ([\d.e-]+) in float64", guide)
    assert m, "the user guide should state the probe's times"
    shape = (int(m[1]), int(m[2]), int(m[3]))
    _times_are_the_runs(runs, "numpy/default/{}", shape, m.group(4, 5, 6), m.group(7, 8, 9))
    assert {runs[f"numpy/default/{dtype}"]["threads"] for dtype in ("float64", "float32")} == {"1"}
    assert f"{runs['numpy/default/float64']['max_rel_diff']:.1e}" == m[10]
    m = re.search(r"on a lent H100 \(torch, CUDA\) it took ([\d.]+) s against ([\d.]+) s in float64 \(([\d.]+)x\) "
                  r"and ([\d.]+) s against ([\d.]+) s in float32 \(([\d.]+)x\), and there `dtype=\"float32\"` leaves "
                  r"the features ([\d.e-]+) off float64's relative to their largest entry \(([\d.e-]+) on NumPy\)",
                  guide)
    assert m, "the user guide should state the probe's GPU times"
    _times_are_the_runs(runs, "torch/cuda/{}", shape, m.group(1, 2, 3), m.group(4, 5, 6))
    assert all("H100" in runs[f"torch/cuda/{dtype}"]["gpu"] for dtype in ("float64", "float32"))
    assert float(m[7]) == float(f"{runs['torch/cuda/float32']['max_rel_diff']:.1e}")
    assert float(m[8]) == float(f"{runs['numpy/default/float32']['max_rel_diff']:.1e}")
    assert runs["torch/cuda/float64"]["max_rel_diff"] < 1e-10
    assert ("Left to itself (no `dtype`), the map picks float64 kernel values at that shape, from float32 rows "
            "too") in guide
    assert (auto["rows"], auto["landmarks"], auto["r"]) == shape
    assert auto["float32_rows"] == auto["float64_rows"] == "float64"


def test_device_copy_claims_are_the_committed_probe():
    """The user guide's gains from copying the features straight into the output rows are
    benchmarks/probes/perf/device_copy_into.py's run on a GPU, both ways giving the same features."""
    probe = json.loads((ROOT / "results/bench/device_copy_into_probe.json").read_text())
    rows = {r["estimator"].split(" ")[0]: r for r in probe["estimators"]}
    cdf, gemm, polar = rows["GICDF(50"], rows["ImageRotation((28,28),"], rows["default"]
    assert (cdf["path"], gemm["path"], polar["path"]) == ("gemm", "gemm", "polar")
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    m = re.search(r"on that GPU GICDF's transform ran ([\d.]+)x faster for it \((\d+) against (\d+) images/s\), the "
                  r"rotation estimator on the GEMM path ([\d.]+)x and the default one ([\d.]+)x, with the same "
                  r"features", guide)
    assert m, "the user guide should quote the device copy probe"
    assert (float(m[1]), int(m[2]), int(m[3])) == (round(cdf["speedup"], 2), round(cdf["straight_images_per_s"]),
                                                  round(cdf["host_temporary_images_per_s"]))
    assert (float(m[4]), float(m[5])) == (round(gemm["speedup"], 2), round(polar["speedup"], 2))
    assert all(r["same_features"] for r in probe["estimators"]) and "H100" in probe["device"]
    assert probe["n_images"] == 8192 and probe["dtype"] == "float32"


def test_torch_on_the_cpu_claims_are_the_committed_probe():
    """The README's and the user guide's advice to keep NumPy on a CPU is benchmarks/probes/perf/torch_cpu.py's run."""
    probe = json.loads((ROOT / "results/bench/torch_cpu_probe.json").read_text())
    ratios = {r["estimator"].split(" ")[0]: r["torch_over_numpy"] for r in probe["estimators"]}
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    m = re.search(r"On this project's (\d+) cores torch ran the default rotation estimator at ([\d.]+)x NumPy's speed, "
                  r"the rotations on the GEMM path at ([\d.]+)x and GICDF at ([\d.]+)x, with features within ([\d.e+-]+) "
                  r"of NumPy's", guide)
    assert m, "the user guide should quote the torch-on-the-CPU probe"
    assert int(m[1]) == probe["cpu_count"] == probe["torch_threads"]
    assert [float(m[i]) for i in (2, 3, 4)] == [round(ratios[k], 2) for k in ("default", "ImageRotation((28,28),",
                                                                               "GICDF(50")]
    assert m[5] == f"{max(r['max_abs_diff'] for r in probe['estimators']):.1e}" and probe["numba"]
    readme = _flat((ROOT / "README.md").read_text())
    m = re.search(r"torch there ran the GPU check's three estimators \(those two and rotations on the GEMM path\) at "
                  r"([\d.]+)-([\d.]+)x its speed on this project's (\d+) cores", readme)
    assert m and int(m[3]) == probe["cpu_count"]
    assert (float(m[1]), float(m[2])) == (round(min(ratios.values()), 2), round(max(ratios.values()), 2)) < (1, 1)


def test_float32_rows_caveat_is_the_committed_probe():
    """The user guide's account of OrbitNystroem's automatic precision on float32 rows is the run of
    benchmarks/probes/perf/nystroem_float32_rows.py: the bound holds on every row sorted as its float64 value is, and
    the one row past it is sorted otherwise."""
    probe = json.loads((ROOT / "results/bench/nystroem_float32_rows_probe.json").read_text())
    guide = _flat((ROOT / "docs/user_guide.md").read_text())
    m = re.search(r"On (\d+) Coulomb-shaped float32 rows .* the bound held on every row at (\d+) to (\d+) orbit "
                  r"landmarks \(at (\d+): bound ([\d.e+-]+), worst row ([\d.e+-]+) of its norm\) but one: .* "
                  r"sort one of its (\d+) copies otherwise than its float64 values do, ([\d.e+-]+) off", guide)
    assert m, "the user guide should state the probe's findings"
    assert int(m[1]) == probe["rows"]
    kept = {int(s): v for s, v in probe["sizes"].items() if v["precision"] == "float32"}
    assert (min(kept), max(kept)) == (int(m[2]), int(m[3]))
    for run in kept.values():  # the bound holds wherever the sortings agree, on both Gaussian paths
        assert run["product_form"]["max_same_sortings"] <= run["bound"]
        assert run["sklearn_kernel"]["max_same_sortings"] <= run["bound"]
    assert sum(v["rows_sorted_otherwise"] for v in kept.values()) == 1  # "but one"
    run = kept[int(m[4])]
    assert run["rows_sorted_otherwise"] == 1 and m[5] == f"{run['bound']:.1e}"
    assert m[6] == f"{run['product_form']['max_same_sortings']:.1e}" and m[8] == f"{run['product_form']['max']:.1e}"
    assert run["product_form"]["max"] > probe["tolerance"] and int(m[7]) == 10
    m = re.search(r'`dtype="float64"` moves the rows in float64 too \(every row within ([\d.e+-]+) there\)', guide)
    assert m and m[1] == f"{run['dtype_float64']['max']:.1e}" and run["dtype_float64"]["max"] < 1e-6
