"""Statistics that committed probe scripts compute from their own variants and that docs/fidelity.md quotes."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from orbitkernels.experiments.report import ProbeFile

ROOT = Path(__file__).resolve().parents[1]


def _probe_module(rel):
    spec = importlib.util.spec_from_file_location(Path(rel).stem, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mnist_fig2_mean_over_training_draws(tmp_path):
    """The pixel grid's rows over training draws: mean, sample sd and the 95 % Student-t interval of the mean,
    one summary per classifier, rewritten as draws are added; a single draw gives no summary."""
    fig2 = _probe_module("benchmarks/probes/mroueh2015/mnist_fig2.py")
    probes = ProbeFile(tmp_path / "p.json", protocol="q", script="s.py", experiment="mnist")
    gauss = [0.9891, 0.9885, 0.9893]
    for k, a in enumerate(gauss):
        probes.save(fig2.pixel_key(True, draw=k), {"accuracy": a})
    probes.save(fig2.pixel_key(False), {"accuracy": 0.9844})
    probes.save(fig2.pixel_key(True, gurls=True), {"accuracy": 0.5})  # another selection rule: not a draw
    fig2.summarise_draws(probes)
    stored = json.loads((tmp_path / "p.json").read_text())["variants"]
    summaries = [k for k in stored if k.endswith("mean over training draws")]
    assert summaries == ["pixel grid |G|=441 Gaussian RLS, centred rows: mean over training draws"]
    s = stored[summaries[0]]
    half = stats.t.ppf(0.975, 2) * np.std(gauss, ddof=1) / np.sqrt(3)
    assert s["n_draws"] == 3 and s["draws"] == "0 1 2"
    assert s["accuracy"] == pytest.approx(np.mean(gauss))
    assert s["sd_between_draws"] == pytest.approx(np.std(gauss, ddof=1))
    assert (s["ci95_low"], s["ci95_high"]) == pytest.approx((np.mean(gauss) - half, np.mean(gauss) + half))
    assert s["paper"] == 0.9897 and s["paper_inside_ci95"] is bool(np.mean(gauss) + half >= 0.9897)

    # a draw written by another process (a second handle on the file) counts too
    ProbeFile(tmp_path / "p.json", protocol="q", script="s.py", experiment="mnist").save(
        fig2.pixel_key(True, draw=13), {"accuracy": 0.9700})
    fig2.summarise_draws(probes, paper=0.9800)
    s = json.loads((tmp_path / "p.json").read_text())["variants"][summaries[0]]
    assert s["n_draws"] == 4 and s["draws"] == "0 1 2 13"
    assert s["accuracy"] == pytest.approx(np.mean(gauss + [0.97]))
    assert s["paper"] == 0.98 and s["paper_inside_ci95"] is True
