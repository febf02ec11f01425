"""docs/performance.md and the Teo et al. reproduction notes, statement by statement: the performance page's prose
(its header, each benchmark's first docstring line, the variants tried of ``bench.VARIANTS``, which the page renders
from the records' copies) against the code, the committed results/bench/*.json and the papers; the notes templates
(src/orbitkernels/experiments/notes/teo2007_*.md) against the results they are filled in from and the paper. Each
test reads files only; the paper-side checks skip where the papers are absent (tests/test_paper_citations.py)."""
from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path


from orbitkernels import bench

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "results" / "bench"


def _rec(name):
    return json.loads((BENCH / f"{name}.json").read_text())


def _probe(name):
    return json.loads((BENCH / f"{name}_probe.json").read_text())


def _evidence(name, marker):
    """The evidence of the one variant of ``bench.VARIANTS[name]`` whose text holds ``marker``."""
    hits = [v["evidence"] for v in bench.VARIANTS[name] if marker in v["variant"] + v["evidence"]]
    assert len(hits) == 1, (name, marker, len(hits))
    return hits[0]


def _r(x):
    """``x`` rounded half up, as the prose rounds (Python's format rounds half to even)."""
    return math.floor(x + 0.5)


def _e(x):
    """``x`` to one significant digit as the prose writes it ("4e-7")."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{x:.0e}")


def _in_range(text, value, digits=2):
    """``value`` rounded lies in the range ``text`` ("1.19-1.39")."""
    lo, hi = map(float, text.split("-"))
    return lo <= round(value, digits) <= hi


def _paper(key):
    from test_paper_citations import paper_texts

    return paper_texts(key)


def test_header_names_the_benchmarks_that_run_a_process_per_case():
    """"Every benchmark runs the methods it compares in one process (memory and setup: a fresh process per case)":
    exactly the benchmarks whose code starts subprocesses."""
    header = bench.render_markdown(BENCH).split("\n## ")[0]
    m = re.search(r"Every benchmark runs the methods it compares in one process \(([\w ,]+): a fresh process per "
                  r"case\) and reports ratios; each file records the load average, BLAS threads, FFT workers and "
                  r"versions of its run\.", " ".join(header.split()))
    assert m, "the page's header should say which benchmarks run a process per case"
    named = set(re.split(r",\s*|\s+and\s+", m[1]))
    spawning = {n for n, fn in bench.BENCHMARKS.items() if "subprocess.run(" in inspect.getsource(fn)}
    assert named == spawning == {"memory", "setup"}
    for name in bench.BENCHMARKS:  # what "each file records"
        env = _rec(name)["environment"]
        assert {"blas_threads", "fft_workers", "numpy", "scipy", "sklearn", "orbitkernels"} <= set(env), name
        assert {"loadavg_before", "loadavg_after"} <= set(_rec(name)), name


def test_recorded_variants_are_the_code_variants_and_summaries_the_generator():
    """The page renders each record's variants and its summary line from the results: the records hold
    ``bench.VARIANTS`` as it is (a prose fix in the code must reach the records too), and ``summarize`` gives the
    line each benchmark recorded (a generator change that moves a number fails here)."""
    for name in bench.BENCHMARKS:
        rec = _rec(name)
        assert rec.get("variants", []) == bench.VARIANTS.get(name, []), name
        assert bench.summarize(name, rec["results"]) == rec["summary"], name


def test_variant_evidence_names_files_and_tests_that_exist():
    """Every script, results file and test a variant names exists (a test named with ``::`` is defined there)."""
    for name, variants in bench.VARIANTS.items():
        for v in variants:
            text = v["variant"] + " " + v["evidence"]
            for path in re.findall(r"(?:benchmarks|results|tests)/[\w/.]+\.(?:py|json)", text):
                assert (ROOT / path).is_file(), (name, path)
            for path, test in re.findall(r"(tests/[\w/]+\.py)::(\w+)", text):
                assert f"def {test}(" in (ROOT / path).read_text(), (path, test)
            for key in re.findall(r"(\w+)_probe\.json", text):
                assert (BENCH / f"{key}_probe.json").is_file(), key


def test_rotations_rf_variants_are_the_probes():
    ev = _evidence("rotations_rf", "inverse_axis.py")
    ax = _probe("inverse_axis")["ms_per_image"]["a block of the chunk's spectrum (the engine's case), 4 rows"]
    assert f"({ax['first axis, untransposed']:.2f} vs {ax['transposed, last axis (before)']:.2f} ms per image)" in ev
    blocks = _probe("correlate_block")["us_per_image"]
    ratios = [v / blocks[k.split(" | ")[0] + " | chunk"] for k, v in blocks.items() if not k.endswith("chunk")]
    assert min(ratios) > 1 and f"{min(ratios):.2f}x to {max(ratios):.1f}x again with the contiguous" in \
        _evidence("rotations_rf", "correlate_block.py")
    lay = _probe("template_spectrum_layout")["us_per_image"]
    ev = _evidence("rotations_rf", "template_spectrum_layout.py (")
    assert (f"{_r(lay['default s=2000 r=64 | strided'])} -> {_r(lay['default s=2000 r=64 | contiguous'])} us per "
            f"image, s = 7000 / 100 angles {_r(lay['rotated_mnist_full s=7000 r=100 | strided'])} -> "
            f"{_r(lay['rotated_mnist_full s=7000 r=100 | contiguous'])}") in " ".join(ev.split())
    sl = {s["s"]: s["us_per_row"] for s in _probe("spectral_layouts")["shapes"].values()}
    assert (f"{_r(sl[2000]['numba direct layout'])} against {_r(sl[2000]['library'])} us per row at s = 2000 / 64 "
            f"angles, {_r(sl[7000]['numba direct layout'])} against {_r(sl[7000]['library'])}"
            ) in _evidence("rotations_rf", "spectral_layouts.py (")
    assert (f"{_r(sl[2000]['real GEMM + DFT GEMM'])} against {_r(sl[2000]['library'])} us per row at s = 2000, "
            f"{_r(sl[7000]['real GEMM + DFT GEMM'])} against {_r(sl[7000]['library'])}"
            ) in _evidence("rotations_rf", "real GEMMs")
    fp = _probe("fft_pool_fused")["results"]
    a, b = fp["s=2000, 64 angles"], fp["s=7000, 100 angles"]
    eng, fus = "engine: transposition + pocketfft irfft + fused cosine", "fused: Stockham inverse DFT + cosine per " \
        "template tile"
    ev = " ".join(_evidence("rotations_rf", "fft_pool_fused.py").split())
    assert (f"(to {_e(a['max_abs_diff_fused_vs_engine'])} at s = 2000, {_e(b['max_abs_diff_fused_vs_engine'])} at "
            f"s = 7000), {_r(a['us_per_image'][fus])} against {_r(a['us_per_image'][eng])} us per image at s = 2000 "
            f"/ 64 angles ({_r(100 * (a['us_per_image'][eng] / a['us_per_image'][fus] - 1))} %) and "
            f"{_r(b['us_per_image'][fus])} against {_r(b['us_per_image'][eng])} at s = 7000 / 100 "
            f"({b['us_per_image'][fus] / b['us_per_image'][eng]:.1f}x slower: pocketfft's c2r is "
            f"~{_r(round(1000 * b['us_per_image']['pocketfft irfft alone'] / 7000, -1))} ns per template") in ev
    est = list(fp["in the estimator: images/s, NumPy's transposition vs the blocked one"].values())
    assert " / ".join(f"{_r(e['blocked transposition'])}" for e in est) + " against " + " / ".join(
        f"{_r(e[next(k for k in e if 'engine' in k)])}" for e in est) + " images/s" in ev
    cw = _probe("chunk_workspace")
    us, sp = cw["us_per_image"], cw["speedup"]
    ev = _evidence("rotations_rf", "chunk_workspace.py (")
    for key, lead in (("default s=2000 r=64", ""), ("rotated_mnist_full s=7000 r=100", ""),
                      ("gicdf MNIST CDF(50, 500) x 64 elements", "GICDF ")):
        assert (f"{lead}{_r(us[key + ' | workspace'])} against {_r(us[key + ' | a new array per chunk (before)'])}"
                in ev and f"({sp[key]:.2f}x)" in ev), key
    assert cw["same_bits"] and "the same bits" in ev
    assert "131 against 169" not in ev  # a profile no committed file records


def test_spectrum_and_fft_library_variants_are_the_probes():
    sp = _probe("spectrum_planes")
    blk = sp["block_pipeline_us_per_image"]
    ev = _evidence("rotations_rf", "spectrum_planes.py (")

    def at(rows, kind, shape="default s=2000 r=64"):
        return blk[f"{shape} | {rows} rows | planes {kind}"]
    odd = [at(n, "an odd number of lines apart") for n in (32, 64, 128, 480)]
    packed = [at(n, "packed") for n in (32, 64, 128, 480)]
    assert (f"{_r(min(odd))}-{_r(max(odd))} against {_r(min(packed))}-{_r(max(packed))} us per image" in ev)
    assert f"the same {_r(round(at(99, 'packed')))} at 99" in ev and round(at(99, "packed")) == round(
        at(99, "an odd number of lines apart"))
    big = "rotated_mnist_full s=7000 r=100"
    assert (f"{_r(at(64, 'an odd number of lines apart', big))} / {_r(at(128, 'an odd number of lines apart', big))} "
            f"against {_r(at(64, 'packed', big))} / {_r(at(128, 'packed', big))} at 64 / 128 digits") in ev
    est, rows = sp["estimator_us_per_image"], sp["chunk_rows"]
    ev = " ".join(_evidence("rotations_rf", "its spectrum twice").split())
    var = next(v["variant"] for v in bench.VARIANTS["rotations_rf"] if "its spectrum twice" in v["variant"])
    for key, s in (("default s=2000 r=64", 2000), (big, 7000)):
        assert (f"{_r(est[key + ' | chunks of the engine' + chr(39) + 's count'])} against "
                f"{_r(est[key + ' | chunks of the old count'])}") in ev, key
        assert (f"{rows[key + ' | chunks of the engine' + chr(39) + 's count']} instead of "
                f"{rows[key + ' | chunks of the old count']}") in var, key
    from orbitkernels.features._engine import DEFAULT_MAX_MEMORY_MB

    assert f"under the default {_r(DEFAULT_MAX_MEMORY_MB)} MB" in var
    fl = _probe("fft_libraries")["us_per_image"]
    small, large = fl["default s=2000 r=64 (4-row blocks)"], fl["rotated_mnist_full s=7000 r=100 (1 row)"]
    pocket, mkl, fftw = "pocketfft (scipy.fft)", "MKL (mkl_fft)", "FFTW (pyfftw, FFTW_PATIENT)"
    ev = " ".join(_evidence("rotations_rf", "fft_libraries.py").split())
    assert (f"at 64 angles {_r(small[mkl])} (MKL) and {_r(small[fftw])} (FFTW, patient plans) against "
            f"{_r(small[pocket])} us per image, which would take ~{_r(small[pocket] - small[mkl])} us per image off "
            f"the FFT floor") in ev
    fftws = [_r(v) for k, v in large.items() if k.startswith("FFTW")]
    assert (f"100 angles {_r(large[mkl])} / {min(fftws)}-{max(fftws)} against {_r(large[pocket])} (no gain)") in ev


def test_thread_variants_hold_the_recorded_runs():
    """The ranges "over three / six runs" hold the recorded run; the recorded figures are the probes' own."""
    pt = _probe("pool_threads")
    ev = " ".join(_evidence("rotations_rf", "pool_threads.py").split())
    over = pt["speedup_threads_vs_before"]
    for label, key in (("the default estimator", "default s=2000 r=64"), ("the Rotated MNIST shape",
                       "rotated_mnist_full s=7000 r=100"), ("the default Nystroem map", "nystroem default s=2000 r=64"),
                       ("GICDF", "gicdf MNIST CDF(50, 500) x 64 elements")):
        m = re.search(re.escape(label) + r" ([\d.]+-[\d.]+)x", ev)
        assert m and _in_range(m[1], over[key]), label
    one = pt["speedup_over_1_thread"]["default s=2000 r=64"]
    assert f"the recorded run: {one['blocks in threads']:.2f}x one thread against {one['before']:.2f}x before" in ev
    st = pt["default_estimator_stages_us_per_image"]
    assert f"The blocks scale by {st['1 thread']['blocks'] / st['2 threads, blocks in threads']['blocks']:.2f}x" in ev
    assert (f"the similarities' products by "
            f"{st['1 thread']['similarities'] / st['2 threads, blocks in threads']['similarities']:.2f}x") in ev
    assert pt["cores"] == 2 and not any(pt["max_abs_diff_vs_before"].values())
    sp = _probe("split_products")
    ev = " ".join(_evidence("rotations_rf", "split_products.py (").split())
    share = sp["default_pooling_threads_cpu_over_wall"]
    m = re.search(r"on the cores ([\d.]+-[\d.]+) of their wall time against ([\d.]+-[\d.]+)", ev)
    assert m and _in_range(m[1], share["2 threads, products split"])
    assert _in_range(m[2], share["2 threads, products on BLAS's threads (before)"])
    for label, key in (("(cos, sin)", "user default s=2000 r=64 (cos, sin)"), ("the cos-only default shape",
                       "default s=2000 r=64"), ("the Rotated MNIST shape", "rotated_mnist_full s=7000 r=100"),
                       ("GICDF on the full circle", "gicdf full circle 500 templates x 64 angles, 50 bins")):
        m = re.search(re.escape(label) + r" ([\d.]+-[\d.]+)x", ev)
        assert m and _in_range(m[1], sp["speedup_split_vs_before"][key]), label
    assert not any(sp["max_abs_diff_vs_1_thread"].values()) and "(max |diff| 0)" in ev
    ev = _evidence("rotations_rf", "the same split under Nystroem")
    assert not re.search(r"\d\.\d+x", ev), "ratios of runs no committed file records"


def test_nystroem_variants_are_the_probes():
    rb = _probe("rbf_pool_fused")
    ev = " ".join(_evidence("rotations_nystroem", "the Gaussian orbit mean fused").split())
    m = re.search(r"the pooling alone ([\d.]+-[\d.]+)x the NumPy passes", ev)
    assert m and _in_range(m[1], rb["block"]["speedup_vs_numpy"]["fused, library kernel"])
    m = re.search(r"the transform ([\d.]+-[\d.]+)x at 2000 landmarks \(probe and benchmark runs\) and ([\d.]+)x at "
                  r"7000", ev)
    assert m and _in_range(m[1], rb["estimator"]["speedup_fused_vs_numpy"])
    assert _in_range(m[1], _rec("rotations_nystroem")["results"]["speedup_fused_vs_off"])
    large = rb["large"]["ms_per_image"]
    assert float(m[2]) == round(large["NumPy passes"] / large["fused"], 2)
    acc = rb["estimator"]["test_accuracy"]
    a, b = acc["OrbitNystroem, fused"], acc["OrbitNystroem, NumPy passes"]
    n_test = rb["estimator"]["config"]["n_test"]
    assert f"test accuracy {a} against {b} ({['no', 'one', 'two', 'three'][round(abs(a - b) * n_test)]} digits in " \
           f"{n_test})" in ev
    m = re.search(r"'fused, scalar math.exp' ([\d.]+-[\d.]+)x", _evidence("rotations_nystroem", "scalar math.exp"))
    assert m and _in_range(m[1], rb["block"]["speedup_vs_numpy"]["fused, scalar math.exp"])
    pm = _probe("nystroem_polar_metric")
    acc, t = pm["test_accuracy"], pm["features_s"]
    ev = _evidence("rotations_nystroem", "dual templates")
    assert (f"Rotated MNIST {acc['dual templates, Cartesian norms']} against {acc['library polar']} for the polar "
            f"metric and {acc['template GEMM, 64 grid angles']} for the Cartesian Gaussian on the template path, at "
            f"{t['dual templates, Cartesian norms'] / t['library polar']:.1f}x the polar path's time") in ev
    assert (f"{acc['library polar, K_ZZ in the polar metric']} against {acc['library polar']}"
            in _evidence("rotations_nystroem", "K_ZZ^{-1/2} of the polar-metric Gaussian"))


def test_rotated_mnist_full_variants_are_the_record_and_the_probe():
    """"fit_s 22 s here": the record the variant sits in (a rerun that moves it fails here); the template tiles'
    figures are the recorded run's."""
    m_ = _rec("rotated_mnist_full")["results"]["measured"]
    ev = _evidence("rotated_mnist_full", "cholesky_path")
    assert f"fit_s {_r(m_['fit_s'])} s here" in ev
    assert f"same alpha {m_['alpha']} and test accuracy {m_['test_accuracy']}" in ev
    assert "here" not in _evidence("rotated_mnist_full", "template_spectrum_layout.py").replace("here)", "")
    tt = _probe("template_tiles")["us_per_image"]
    ev = " ".join(_evidence("rotated_mnist_full", "template_tiles.py").split())
    big, small = "rotated_mnist_full s=7000 r=100 | ", "default s=2000 r=64 | "
    m = re.search(r"tiles of 2000 templates ([\d-]+) us per image against ([\d-]+) for whole rows over four runs", ev)
    assert m and _in_range(m[1], tt[big + "tiles of 2000 templates"], 0)
    assert _in_range(m[2], tt[big + "whole rows (the engine)"], 0)
    assert (f"({_r(tt[big + 'tiles of 250 templates'])} / {_r(tt[big + 'tiles of 500 templates'])} at 250 / 500 in "
            "the recorded run)") in ev
    whole = tt[small + "whole rows (the engine)"]
    assert (f"tiles of 250 and 500 slower ({_r(tt[small + 'tiles of 250 templates'])} / "
            f"{_r(tt[small + 'tiles of 500 templates'])} against {_r(whole)}), of 1000 within "
            f"{_r(100 * abs(1 - tt[small + 'tiles of 1000 templates'] / whole))} % "
            f"({_r(tt[small + 'tiles of 1000 templates'])})") in ev
    assert min(tt[small + f"tiles of {n} templates"] for n in (250, 500)) > whole


def test_gemm_peak_variants_are_the_probes():
    ck = _probe("cdf_pool_kernel")
    ms = ck["ms_per_1024_images"]
    ev = " ".join(_evidence("gemm_peak", "on an AVX-512 core").split())
    m = re.search(r"the pooling alone in the same rounds: ([\d.]+-[\d.]+) ms per 1024 images against "
                  r"([\d.]+-[\d.]+) ms for the NumPy pooling \(([\d.]+)x\) in three runs", ev)
    assert m and _in_range(m[1], ms["fused"], 1) and _in_range(m[2], ms["numpy"], 1)
    assert float(m[3]) == round(ck["speedup_vs_numpy"]["fused"], 1) and ck["features_identical"]
    wh = _probe("gicdf_warm_heap")["gicdf_share_of_sgemm"]
    shares = " / ".join(f"{_r(100 * x)}" for x in wh["default allocator"]) + " % with the default allocator, " + \
        " / ".join(f"{100 * x:.1f}" for x in wh["warm heap"]) + " %"
    assert shares in ev and shares.split(" with")[0] in _evidence("gemm_peak", "warm heap (glibc mallopt")
    off = [s["share_of_sgemm"]["transform, fused kernels off"] for sits in
           _probe("gicdf_warm_heap")["sittings"].values() for s in sits]
    assert f"{_r(100 * min(off))}-{_r(100 * max(off))} % with the NumPy pooling either way" in ev
    ev = _evidence("gemm_peak", "constant increment")
    speedup = ms["fused, before"] / ms["fused"]
    assert f"{_r(ms['fused'])} vs {_r(ms['fused, before'])} ms per 1024 images ({speedup:.2f}x)" in ev
    m = re.search(r"'fused, table' ([\d.]+-[\d.]+) vs 'fused' ([\d.]+-[\d.]+)", _evidence("gemm_peak", "(r+1)-entry"))
    assert m and _in_range(m[1], ms["fused, table"], 1) and _in_range(m[2], ms["fused"], 1)
    ch = _probe("gicdf_chunks")["sittings"]
    ev = _evidence("gemm_peak", "gicdf_chunks.py")
    for label, key in (("one chunk", "one chunk (256 MB, the default)"), ("against", "two chunks (80 MB)")):
        vals = [100 * s["share_of_sgemm"][key] for s in ch]
        assert f"{label} {min(vals):.1f}-{max(vals):.1f} %" in ev, label
    rows = _probe("gicdf_chunks")["gemm_rows_per_transform"]
    assert rows["one chunk (256 MB, the default)"] == [1024]
    assert "two (" + " + ".join(map(str, rows["two chunks (80 MB)"])) + " rows at 80 MB)" in ev
    # the benchmark's own record: the chunks its GICDF transform made at the default budget
    assert _rec("gemm_peak")["results"]["gicdf_50_bins"]["chunk_rows"] == [1024]
    pa = _rec("polar_accuracy")["results"]
    assert pa["polar_fft"]["test_accuracy"] == pa["polar_fft (fused kernels off)"]["test_accuracy"]
    assert "polar_accuracy.json, test_accuracy: 'polar_fft' vs 'polar_fft (fused kernels off)'" in \
        _evidence("gemm_peak", "float32 cosine")


def test_benchmark_first_lines_are_the_code_and_the_papers():
    """The sections' first lines: configurations the code runs, and the papers' sections that give them."""
    gic = _rec("gicdf_mnist")["results"]["config"]
    assert (gic["n_bins"], gic["n_templates"]) == (50, 500) and "U(-20deg, 20deg)" in gic["group"] and \
        "U(-3, 3) px" in gic["group"]
    assert bench.bench_gicdf_mnist.__doc__.startswith(
        "GICDF, Mroueh §6 MNIST (Fig. 2): CDF(50 bins, 500 templates), templates rotated in ±20° and shifted by "
        "±3 px.")
    q = _rec("qm7_lgika")["results"]["config"]
    assert q["r"] == 70 and "(Raj §4.1): Montavon permutations (r = 70, data side)" in bench.bench_qm7_lgika.__doc__
    rm = _rec("rotated_mnist_full")["results"]["config"]
    assert (rm["n_images"], rm["s"], rm["r"]) == (62000, 7000, 100) and "VonMises" in rm["group"]
    assert bench.bench_rotated_mnist_full.__doc__.startswith("Raj §4.2 Rotated MNIST: 62k images, s=7k, r=100 von "
                                                             "Mises rotations")
    from test_paper_citations import _norm

    mroueh, raj = " ".join(_paper("mroueh")), " ".join(_paper("raj"))
    i = mroueh.index(_norm("MNIST (Figure 2):"))
    assert _norm("translated by up to 3 pixels in all directions and rotated between -20 and 20 degrees") in \
        mroueh[i:i + 300] and _norm("CDF(50,500)") in mroueh
    assert _norm("6 Numerical Evaluation") in mroueh and mroueh.index(_norm("6 Numerical Evaluation")) < i
    sec41, sec42 = raj.index(_norm("4.1 Quantum Machine dataset")), raj.index(_norm("4.2 Rotated MNIST"))
    assert _norm("we sample 70 random permutations ($r = 70$ in Eq. 7) using the same scheme as in [28]") in \
        raj[sec41:sec42] or _norm("r = 70") in raj[sec41:sec42]
    body = raj[sec42:raj.index(_norm("4.3 CIFAR-10"))]
    assert _norm("62k") in body and _norm("s = 7k") in body and _norm("r = 100") in body and \
        _norm("von-misses") in body
    assert re.search(r"\\psi_\{rf\}\(x\).{0,400}\(7\)", raj) and re.search(r"\\psi_\{nys\}\(x\).{0,200}\(8\)", raj)


def test_teo_notes_are_the_results_and_the_paper():
    """The notes' claims that the template states outright: the McNemar arithmetic, the part-10 p-value, the
    one-vs-one count and what the paper gives (3 test users of 2,500 e-mails, a multiclass VIR-SVM, no C or γ)."""
    from orbitkernels.experiments import teo2007

    spam = json.loads((ROOT / "results/teo2007/spam.json").read_text())
    note = teo2007.experiment_notes("spam", spam["data"], spam["config"])
    m = re.search(r"below 1e-32 only from m = (\d+), and at K = (\d+) it gives (\d[\d.]*e-\d+)", note)
    assert m and 2.0 ** (1 - int(m[1])) < 1e-32 <= 2.0 ** (2 - int(m[1]))
    assert float(m[3]) > 1e-32 and "does not reach 1e-32 at K = " + m[2] in note
    pairs = max(c[teo2007.HEADLINE_ATTACK][m[2]]["hinge_only"] + c[teo2007.HEADLINE_ATTACK][m[2]]["invariant_only"]
                for c in spam["data"]["mcnemar"].values())
    assert pairs < int(m[1])
    mnist = json.loads((ROOT / "results/teo2007/mnist.json").read_text())
    note = teo2007.experiment_notes("mnist", mnist["data"], mnist["config"])
    assert "over the 45 one-vs-one machines of libsvm" in note and math.comb(10, 2) == 45
    assert "one-vs-one" in mnist["config"]["svm"] and len(mnist["config"]["transformations"]) == 20
    assert "under several of its 20 transformations" in note and "of its multiclass VIR-SVM" in note
    from test_paper_citations import _norm

    teo = " ".join(_paper("teo"))
    assert _norm("4000/2500×3 training/testing emails") in teo and _norm("p-value < 10") in teo
    assert _norm("to train a multiclass SVM (VIR-SVM)") in teo and _norm("one-vs-one") not in teo
    assert _norm("RBF kernel with well-chosen hyperparameters") in teo
    assert _norm("the number of support vectors is roughly half of that in the VIR-SVM") in teo
