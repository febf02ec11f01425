"""The gallery's claims hold on what its examples print.

Each ``examples/plot_*.py`` runs at every documentation build, and its text states results: numbers, "X beats Y",
"exactly invariant". Here each example runs in this process (``runpy`` under
``__main__``, headless, in an empty folder) and its printed lines are checked against the sentences of its text, so
that a change of the library that breaks a claim fails the suite rather than leaving the docs site wrong. The examples
seed every random draw, so what they print is fixed for a given library and platform; the checks leave the margins
the text's wording leaves ("about 0.1", "a few hundredths"). The QM7 example runs on the real file when the shared
data folder holds it (skipped otherwise, naming the file) and on its generated molecules without it.
"""
import re
import runpy
import sys
from pathlib import Path

import pytest

from conftest import shared_data_dir

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = shared_data_dir()  # before any test points ORBITKERNELS_DATA elsewhere
FLOAT = r"-?\d+\.\d+(?:e[-+]\d+)?"


@pytest.fixture
def run_example(monkeypatch, capsys, tmp_path):
    """Runs ``examples/<name>.py`` as ``python <name>.py`` would, in an empty folder; returns what it printed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(work)

    def run(name, data_home):
        monkeypatch.setenv("ORBITKERNELS_DATA", str(data_home))
        path = EXAMPLES / f"{name}.py"
        monkeypatch.setattr(sys, "argv", [str(path)])
        capsys.readouterr()
        try:
            runpy.run_path(str(path), run_name="__main__")
        finally:
            plt.close("all")
        assert not list(work.iterdir()), f"{name} wrote files: {sorted(p.name for p in work.iterdir())}"
        return capsys.readouterr().out

    return run


@pytest.fixture
def empty_data(tmp_path):
    folder = tmp_path / "no-data"
    folder.mkdir()
    return folder


def _floats(text):
    return [float(v) for v in re.findall(FLOAT, text)]


def _rows(out, names, n):
    """``{name: [n numbers]}`` from the lines that start with each name."""
    rows = {}
    for line in out.splitlines():
        for name in names:
            if line.startswith(name):
                rows[name] = _floats(line[len(name):])[:n]
    assert set(rows) == set(names) and all(len(v) == n for v in rows.values()), out
    return rows


def test_every_example_is_checked():
    checked = {name[len("test_"):] for name in globals() if name.startswith("test_plot_")}
    examples = {p.stem for p in EXAMPLES.glob("plot_*.py")}
    assert examples <= checked, f"gallery examples whose claims no test checks: {sorted(examples - checked)}"


# --- plot_dask_scale_out -----------------------------------------------------------------------------------------
DASK_LINE = re.compile(r"^(in memory|dask, \d+-row chunks): alpha (\S+), test accuracy ([0-9.]+), ([0-9.]+) s(.*)$")


def _dask_runs(out):
    runs = {m.group(1): m.groups()[1:] for m in map(DASK_LINE.match, out.splitlines()) if m}
    assert list(runs)[0] == "in memory" and len(runs) == 4, out
    return runs


def test_plot_dask_scale_out(run_example, empty_data):
    out = run_example("plot_dask_scale_out", empty_data)
    runs = _dask_runs(out)
    alpha, accuracy, _, _ = runs["in memory"]
    # the best alpha lies inside the grid (1e-6 ... 1e2), not at an edge
    assert 1e-6 < float(alpha) < 1e2, out
    for label, (a, acc, _, rest) in list(runs.items())[1:]:
        # "The chosen α, the validation errors and the predictions are the same; the features agree to rounding."
        assert (a, acc) == (alpha, accuracy), out
        assert "same validation errors: True" in rest and "same predictions: True" in rest, out
        assert float(re.search(r"largest feature difference (\S+)", rest).group(1)) <= 1e-10, out
    # the wall times are printed and plotted, not asserted: speed is measured by benchmarks, not by timed tests


# --- plot_feature_deletion ---------------------------------------------------------------------------------------
def test_plot_feature_deletion(run_example, empty_data):
    out = run_example("plot_feature_deletion", empty_data)
    header = next(line for line in out.splitlines() if line.startswith("test accuracy, deleted:"))
    deleted = [int(k) for k in header.split(":")[1].split()[:7]]
    assert deleted == [0, 1, 2, 3, 5, 8, 12], out
    names = ["hinge (no invariance)", "FDROP, K=5", "FSCALE, K=5, [0.5, 2]"]
    rows = {}
    for line in out.splitlines():
        for name in names:
            if line.startswith(name):
                values = line[len(name):].split()
                rows[name] = ([float(v) for v in values[:7]], float(values[7].rstrip("%")) / 100)
    assert set(rows) == set(names), out
    (hinge, hinge_share), (fdrop, fdrop_share), (fscale, fscale_share) = (rows[n] for n in names)
    at = {K: i for i, K in enumerate(deleted)}
    # hinge: "perfect on intact documents, it collapses once they are deleted"
    assert hinge[at[0]] >= 0.995 and hinge[at[5]] < 0.5, out
    # FDROP: "gives up a little on intact documents", "moves weight from the telltale words", "degrades far more slowly"
    assert hinge[at[0]] - 0.1 <= fdrop[at[0]] < hinge[at[0]], out
    assert fdrop_share < hinge_share, out
    assert all(fdrop[at[K]] > hinge[at[K]] for K in (3, 5, 8, 12)) and fdrop[at[5]] - hinge[at[5]] >= 0.2, out
    # FSCALE: "even more of its weight on the telltale words", "up to 5 deletions within a few hundredths" of hinge
    assert fscale_share > hinge_share, out
    assert all(abs(fscale[at[K]] - hinge[at[K]]) <= 0.05 for K in deleted if K <= 5), out


# --- plot_invariance_diagnostic ----------------------------------------------------------------------------------
def test_plot_invariance_diagnostic(run_example, empty_data):
    out = run_example("plot_invariance_diagnostic", empty_data)
    baseline = _floats(re.search(r"plain RFF: mean relative change (\S+)", out).group(1))[0]
    counts = [int(v) for v in re.search(r"^n_group_samples\s+([\d ]+)$", out, re.M).group(1).split()]
    assert counts == [2, 4, 8, 16, 32], out
    rows = _rows(out, ["orbit RFF (Raj)", "GICDF (Mroueh)"], len(counts))
    orbit, gicdf = rows["orbit RFF (Raj)"], rows["GICDF (Mroueh)"]
    for values in (orbit, gicdf):
        # "the error falls with r until what is left is the interpolation of the pixel grid"
        assert all(v < baseline for v in values), out
        assert all(b < a for a, b in zip(values[:4], values[1:4])), out
        assert values[4] <= values[3] + 0.02, out
    # "GICDF's relative change is smaller at every r"
    assert all(g < o for g, o in zip(gicdf, orbit)), out
    per_r = {int(m.group(1)): [float(m.group(i)) for i in (2, 3, 4)] for m in re.finditer(
        rf"^\s*(\d+) rotations: at the quarter turns ({FLOAT}), between them mean ({FLOAT}), largest ({FLOAT})$",
        out, re.M)}
    assert sorted(per_r) == [4, 12, 64], out
    # "The error vanishes at the quarter turns"
    assert all(q <= 1e-12 for q, _, _ in per_r.values()), out
    # "averaging over 4 rotations leaves a large error; over 12 or 64 it levels off at about 0.1"
    assert per_r[4][1] > 0.25, out
    for r in (12, 64):
        assert 0.07 <= per_r[r][1] <= 0.13 and per_r[r][2] < 0.15, out
    assert abs(per_r[12][1] - per_r[64][1]) <= 0.02, out


# --- plot_invariant_svm ------------------------------------------------------------------------------------------
def test_plot_invariant_svm(run_example, empty_data):
    out = run_example("plot_invariant_svm", empty_data)
    assert re.search(r"Invar-SVM: \d+ passes, converged: True, \d+ constraints in the working sets", out), out
    models = {m.group(1): (float(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^(\S+-SVM)\s+accuracy on shifted digits ([0-9.]+),\s+(\d+) support vectors", out, re.M)}
    assert set(models) == {"STD-SVM", "VIR-SVM", "Invar-SVM"}, out
    (std, _), (vir, vir_sv), (invar, invar_sv) = (models[n] for n in ("STD-SVM", "VIR-SVM", "Invar-SVM"))
    # "Knowing the shifts more than doubles the accuracy on shifted digits."
    assert vir > 2 * std and invar > 2 * std, out
    # "The invariant SVM matches the virtual-sample SVM, with about as many support vectors"
    assert abs(invar - vir) <= 0.02, out
    assert 0.8 <= invar_sv / vir_sv <= 1.25, out
    # "the working sets end up holding most of" the 500 copies (each support vector is one of them)
    assert 250 < invar_sv <= 500, out


# --- plot_permutation_invariant_sets -----------------------------------------------------------------------------
def test_plot_permutation_invariant_sets(run_example, empty_data):
    out = run_example("plot_permutation_invariant_sets", empty_data)
    assert out.startswith("32768 sequences, 21.1% positive"), out
    names = ["plain RFF", "orbit RFF, S_5 (Raj)", "GICDF, S_5 (Mroueh)"]
    rows = _rows(out, names, 7)  # the balanced accuracies at 20 ... 640 sequences, then the invariance error
    sizes = [20, 40, 80, 160, 320, 640]
    plain = rows["plain RFF"]
    for name in names[1:]:
        curve, change = rows[name][:6], rows[name][6]
        # "With 20 training sequences it already beats plain random Fourier features trained on 640."
        assert curve[0] > plain[5], out
        # "The invariant maps score above 0.95 from 80 training sequences on"
        assert all(a > 0.95 for n, a in zip(sizes, curve) if n >= 80), out
        # "exactly invariant": the largest relative change under permutations is rounding
        assert change <= 1e-12, out
    # "plain features ... are still near 0.6" (at 80 and 160 sequences); their change is "of order 1"
    assert all(0.55 <= a <= 0.7 for a in plain[2:4]), out
    assert plain[6] >= 0.5, out


# --- plot_qm7_orbit_features -------------------------------------------------------------------------------------
def _check_qm7(out, source):
    assert out.startswith(source), out
    rmse = {m.group(1).strip(): float(m.group(2)) for m in re.finditer(r"^(.{22}) test RMSE\s+([0-9.]+)", out, re.M)}
    assert set(rmse) == {"Coulomb matrix (RFF)", "sorted Coulomb (RFF)", "orbit RFF (Raj)"}, out
    # "The orbit features are the most accurate of the three here"
    assert rmse["orbit RFF (Raj)"] < min(rmse["Coulomb matrix (RFF)"], rmse["sorted Coulomb (RFF)"]), out


def test_plot_qm7_orbit_features(run_example):
    if DATA is None or not (DATA / "qm7.npz").is_file():
        pytest.skip(f"qm7.npz is not in the data folder ({DATA or 'ORBITKERNELS_DATA is not set'})")
    _check_qm7(run_example("plot_qm7_orbit_features", DATA), "QM7, 2,000 molecules")


def test_plot_qm7_orbit_features_without_the_data(run_example, empty_data):
    # "Without the data set, the example builds 2,000 small random molecules ... and shows the same comparison"
    _check_qm7(run_example("plot_qm7_orbit_features", empty_data), "generated molecules (QM7 not found)")


# --- plot_local_invariance ---------------------------------------------------------------------------------------
def test_plot_local_invariance(run_example, empty_data):
    out = run_example("plot_local_invariance", empty_data)
    cv = {float(m.group(1)): float(m.group(2)) for m in re.finditer(
        rf"^kappa\s+({FLOAT})\s+cross-validated accuracy ({FLOAT})", out, re.M)}
    assert sorted(cv) == [0.0, 0.25, 1.0, 4.0, 64.0], out
    best = float(re.search(rf"^chosen kappa ({FLOAT})\s+test accuracy", out, re.M).group(1))
    # the search's choice is the best mean, a law in between: it beats the uniform law and the one of least spread
    assert cv[best] == max(cv.values()) and 0.0 < best < 64.0, out
    rows = {m.group(1).strip(): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^(.{24}) test errors\s+(\d+)\s+6 and 9 confused (\d+)", out, re.M)}
    chosen, uniform, rigid = (rows[k] for k in (f"chosen (kappa {best:g})", "uniform (kappa 0)",
                                                  "nearly none (kappa 64)"))
    # "the uniform law confuses them, the chosen one does not"; "the most errors of the three"
    assert uniform[1] > 0 and chosen[1] == 0, out
    assert rigid[0] > max(chosen[0], uniform[0]) and chosen[0] < uniform[0], out


# --- plot_rotated_digits -----------------------------------------------------------------------------------------
def test_plot_rotated_digits(run_example, empty_data):
    out = run_example("plot_rotated_digits", empty_data)
    scores = {m.group(1).strip(): (float(m.group(2)), float(m.group(3))) for m in re.finditer(
        r"^(.{16}) upright test ([0-9.]+)\s+rotated test ([0-9.]+)", out, re.M)}
    assert set(scores) == {"plain RFF", "orbit RFF (Raj)", "GICDF (Mroueh)"}, out
    upright, rotated = scores["plain RFF"]
    # "Plain features lose most of their accuracy on rotated digits"
    assert rotated < 0.5 * upright, out
    # "both orbit maps lose only a few hundredths of theirs"; "GICDF ... is the least accurate on upright digits"
    for name in ("orbit RFF (Raj)", "GICDF (Mroueh)"):
        assert scores[name][0] - scores[name][1] <= 0.05, out
    assert scores["GICDF (Mroueh)"][0] == min(u for u, _ in scores.values()), out
