"""The generated pages are the committed results rendered by the current code, and the gap notes' template
reproduces the prose (and every number) that the results files recorded."""
from pathlib import Path

import pytest

from orbitkernels.experiments import mroueh2015, raj2017, teo2007
from orbitkernels.experiments.report import fill_notes, render_readme_block, render_results
from orbitkernels.utils.io import read_json

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


@pytest.mark.parametrize("module", [mroueh2015, raj2017, teo2007], ids=lambda m: m.PAPER)
def test_committed_page_is_the_rendered_results(module):
    page = ROOT / "docs" / "reproductions" / f"{module.PAPER}.md"
    assert module.render_markdown(RESULTS) == page.read_text(encoding="utf-8"), \
        f"{page.name} is stale or the renderer changed: run `orbitkernels report`"


def test_committed_results_page_and_readme_table_are_current():
    assert render_results(RESULTS) == (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- results:begin -->\n" + render_readme_block(RESULTS) + "<!-- results:end -->" in readme


def test_qm7_gap_notes_are_filled_in_from_the_results_file_on_the_page():
    """A QM7 run stores no gap analysis (older files carried a copy, which the page replaces): the page shows
    notes/raj2017_qm7.md filled in from the file's own numbers, after the run's notes."""
    res = read_json(RESULTS / "raj2017" / "qm7.json")
    gap = raj2017.qm7_gap_notes(res["data"], res["config"])
    assert raj2017.GAP_MARK not in res["notes"] and "LGIKA (RF) mean RMSE over the folds vs D" in gap
    page = (ROOT / "docs" / "reproductions" / "raj2017.md").read_text()
    assert res["notes"] + raj2017.GAP_MARK + gap in page


def test_qm7_gap_notes_follow_the_numbers():
    res = read_json(RESULTS / "raj2017" / "qm7.json")
    row = next(r for r in res["data"]["rows"] if r["method"] == "sort_krr_lap")
    row["rmse"] = 1.234
    text = raj2017.qm7_gap_notes(res["data"], res["config"])
    assert "reaches RMSE 1.23 / MAE" in text
    res["data"]["trials"] = None  # no probes: their notes are left out, the rows' notes stay
    text = raj2017.qm7_gap_notes(res["data"], res["config"])
    assert "Outliers" not in text and "One-fold probes" not in text and "2nd RF layer" in text


TEMPLATE = """<!-- a comment for the reader -->
<!-- note: first -->
Rows {rows}[[, mean {mean:.1f}]].

<!-- list: rows sep="; " -->
{name} {v:.2f}

<!-- note: second -->
Second {x}.
"""


def test_fill_notes_lists_optional_segments_and_repeats():
    values = {"first": {"rows": [{"name": "a", "v": 1.0}, {"name": "b", "v": 2.5}], "mean": 1.75},
              "second": [{"x": 1}, {"x": 2}]}
    assert fill_notes(TEMPLATE, values) == "Rows a 1.00; b 2.50, mean 1.8. Second 1. Second 2."
    values["first"]["mean"] = None
    del values["second"]
    assert fill_notes(TEMPLATE, values) == "Rows a 1.00; b 2.50."


def test_fill_notes_missing_field_fails_clearly():
    with pytest.raises(KeyError, match="'rows'"):
        fill_notes(TEMPLATE, {"first": {"mean": 1.0}})


@pytest.mark.parametrize("name", ["xperm", "mnist"])
def test_declared_configuration_is_the_recorded_one(name):
    """A rerun reuses the stored cells only under the same configuration: the declared one must be the one the
    recorded results were made with."""
    import json

    res = read_json(RESULTS / "mroueh2015" / f"{name}.json")
    declared = getattr(mroueh2015, f"{name}_config")(quick=False, seed=res["config"]["seed"])
    assert json.loads(json.dumps(declared)) == res["config"]


@pytest.mark.parametrize("name", ["mnist", "spam"])
def test_teo_notes_template_reproduces_the_recorded_prose(name):
    res = read_json(RESULTS / "teo2007" / f"{name}.json")
    assert teo2007.experiment_notes(name, res["data"], res["config"]) == res["notes"]


def test_teo_notes_follow_the_numbers():
    res = read_json(RESULTS / "teo2007" / "mnist.json")
    res["data"]["ordering"][-1]["sv_ratio_invar_vir"] = 0.5
    text = teo2007.experiment_notes("mnist", res["data"], res["config"])
    assert "the ratio at the largest size is 0.50" in text and "above the paper's 'roughly half'" not in text


def test_qm7_declared_grid_and_summary_are_the_recorded_ones():
    """The declared plan of the recorded configuration names exactly the stored cells (a rerun reuses them all),
    and the summary made from those cells is the recorded one (headline cells and the run's notes)."""
    res = read_json(RESULTS / "raj2017" / "qm7.json")
    cfg = {k: v for k, v in res["config"].items() if k not in ("configuration", "seed", "lambdas")}
    plan, beyond = raj2017.qm7_plan(res["config"]["configuration"], cfg)
    # a run cut by its time budget names the cells it skipped (the next run computes them)
    skipped = set(res["data"]["skipped_cells"])
    assert not skipped & set(res["data"]["cells"])
    first = {k for k in skipped if not k.startswith(("hyper|", "wide|", "orf|"))}  # first-layer cells
    assert {f"{m}|{d}|{k}" for m, d, k in plan} == set(res["data"]["cells"]) | first
    assert beyond == res["data"]["beyond"]
    # the cells on first layers (stored among the run's cells) follow their own declared plans: the exact
    # hyperkernel, the 2nd RF layer at the paper's width, the same with orthogonal frequencies (those not
    # computed yet are named as skipped)
    on_first = {}
    for prefix, part in (("hyper|", "layer2_exact"), ("wide|", "layer2_paper"), ("orf|", "layer2_orthogonal")):
        on_first[prefix] = {k[len(prefix):]: v for k, v in res["cells"].items() if k.startswith(prefix)}
        assert ({f"{m}|{d}|{k}" for m, d, k in raj2017.qm7_hyper_plan(cfg, part)}
                == set(on_first[prefix]) | {k[len(prefix):] for k in skipped if k.startswith(prefix)})
    rows = raj2017._qm7_rows(res["data"]["cells"], cfg, on_first["hyper|"], on_first["wide|"], on_first["orf|"])
    assert rows == res["data"]["rows"]
    assert raj2017._qm7_headlines(rows, cfg, beyond) == res["headline"]
    notes = raj2017._qm7_notes(res["config"]["configuration"], cfg, res["data"]["folds_source"],
                               res["data"]["skipped_cells"])
    assert res["notes"].split(raj2017.GAP_MARK)[0] == notes


def _resumed_run(tmp_path, paper, name, cfg):
    """An ExperimentRun over a copy of the committed results file: it takes the stored cells as a rerun would."""
    import shutil

    from orbitkernels.experiments._runner import ExperimentRun

    (tmp_path / paper).mkdir()
    shutil.copy(RESULTS / paper / f"{name}.json", tmp_path / paper / f"{name}.json")
    run = ExperimentRun(paper, name, cfg, out_dir=tmp_path)
    assert run.n_resumed > 0
    return run


def test_mroueh_mnist_summary_from_the_stored_cells_is_the_recorded_one(tmp_path):
    from types import SimpleNamespace

    res = read_json(RESULTS / "mroueh2015" / "mnist.json")
    cfg = mroueh2015.mnist_config(quick=False, seed=res["config"]["seed"])
    run = _resumed_run(tmp_path, "mroueh2015", "mnist", cfg)
    d = SimpleNamespace(cfg=cfg, yte=range(cfg["n_test"]))  # the summary reads the configuration and the test size
    data, heads, notes = mroueh2015._mnist_summary(run, d, res["data"]["projection_spread"], res["data"]["gap"],
                                                   quick=False)
    assert heads == res["headline"] and notes == res["notes"]
    assert data == {k: v for k, v in res["data"].items() if k != "run_seconds_this_session"}


def test_teo_mnist_configuration_and_summary_are_the_recorded_ones(tmp_path):
    res = read_json(RESULTS / "teo2007" / "mnist.json")
    cfg = teo2007.mnist_config(quick=False, seed=res["config"]["seed"])
    assert read_json_roundtrip(cfg) == res["config"]
    from orbitkernels.experiments._runner import ExperimentRun

    # the file keeps its test cells inside the curves (each size's draws): put them back as cells
    run = ExperimentRun("teo2007", "mnist", cfg, out_dir=tmp_path)
    for m, rows in res["data"]["curves"].items():
        for row in rows:
            for r, cell in enumerate(row["draws"]):
                run.cells[run.key("fig1", m, f"n{row['per_class']}", f"draw{r}")] = cell
    curves, heads, order, notes = teo2007._mnist_summary(run, cfg, res["data"]["selected"])
    assert heads == res["headline"] and notes == res["notes"]
    assert read_json_roundtrip({"curves": curves, "ordering": order}) == {k: res["data"][k] for k in ("curves", "ordering")}


def read_json_roundtrip(obj):
    import json

    return json.loads(json.dumps(obj))


def test_committed_probe_tables_are_current():
    from orbitkernels.experiments.report import PROBES_PAGE, render_probes

    page = (ROOT / PROBES_PAGE).read_text(encoding="utf-8")
    assert "<!-- probes:begin -->\n" + render_probes(RESULTS) + "<!-- probes:end -->" in page, \
        f"{PROBES_PAGE} is stale: run `orbitkernels report`"


def test_render_probes_lists_every_variant_and_scalar_field(tmp_path):
    import json

    from orbitkernels.experiments.report import render_probes

    assert render_probes(tmp_path) == "No probe results yet.\n"
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "x_probes.json").write_text(json.dumps({
        "protocol": "Does a|b hold?", "script": "benchmarks/probes/paper/x.py",
        "variants": {"first": {"error": 0.123456, "converged": True, "curve": [1, 2], "load_avg_1min": 3.0},
                     "second": {"error": None, "n": 7}}}))
    text = render_probes(tmp_path)
    assert "### Does a\\|b hold?" in text and "`benchmarks/probes/paper/x.py`" in text
    assert "| variant | error | converged | n |" in text          # lists and the load average left out
    assert "| first | 0.1235 | yes | — |" in text and "| second | — | — | 7 |" in text


def test_probe_file_writes_each_variant_at_once_and_skips_it_on_a_rerun(tmp_path):
    from orbitkernels.experiments.report import ProbeFile, probe_pointers, render_probes

    path = tmp_path / "paper" / "y_probes.json"
    path.parent.mkdir()
    calls = []

    def compute():
        calls.append(1)
        return {"error": 0.25}

    probes = ProbeFile(path, protocol="Does it?", script="benchmarks/probes/paper/y.py", experiment="mnist", seed=3)
    probes.record("v1", compute)
    assert path.exists() and calls == [1]
    again = ProbeFile(path, protocol="changed", script="other.py", experiment="other", seed=4)
    again.record("v1", compute)  # stored: not recomputed, and the stored settings win
    assert calls == [1] and again.store["protocol"] == "Does it?" and again.store["seed"] == 3
    v = again.store["variants"]["v1"]
    assert v["error"] == 0.25 and v["seconds"] >= 0 and "load_avg_1min" in v
    again.save("v2", {"error": 0.5})
    assert "| v2 | 0.5 |" in render_probes(tmp_path) and probe_pointers(path.parent, "mnist")
    # two processes running different variants of one probe: each write keeps what the other wrote
    other = ProbeFile(path, protocol="Does it?", script="benchmarks/probes/paper/y.py", experiment="mnist")
    again.save("v3", {"error": 0.75})
    other.save("v4", {"error": 1.0})
    assert set(read_json(path)["variants"]) == {"v1", "v2", "v3", "v4"}


def test_probe_pointers_name_the_probes_of_one_experiment(tmp_path):
    import json

    from orbitkernels.experiments.report import probe_pointers

    (tmp_path / "a_probes.json").write_text(json.dumps({"protocol": "Why?", "script": "s.py", "experiment": "mnist",
                                                        "variants": {"v": {"x": 1}}}))
    (tmp_path / "b_probes.json").write_text(json.dumps({"protocol": "Other", "experiment": "spam", "variants": {}}))
    lines = probe_pointers(tmp_path, "mnist")
    assert "- Why? `s.py`, 1 variants." in lines and not any("Other" in l for l in lines)
    assert any("../fidelity.md" in l for l in lines)
    assert probe_pointers(tmp_path, "speech") == []


def test_readme_second_layer_sentence_is_the_committed_results():
    """The README's numbers for the second layer at the paper's width (orthogonal and i.i.d. frequencies) are the
    rows of the committed Raj results, rounded as printed."""
    import re

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    rows = {(r["method"], r["dim"]): r for r in read_json(RESULTS / "raj2017" / "rotated_mnist.json")["data"]["rows"]}
    qm7 = {(r["method"], r["dim"]): r for r in read_json(RESULTS / "raj2017" / "qm7.json")["data"]["rows"]}
    nys, rf, q = rows[("lgika_nys_r100_qmc", 7000)], rows[("lgika_rf_r100_qmc", 14000)], qm7[("lgika_rf", 20000)]
    m = re.search(r"LGIKA \(Nys\) goes from ([\d.]+) % to ([\d.]+) % \(the paper's second layer: ([\d.]+) %\) and "
                  r"LGIKA \(RF\) from ([\d.]+) % to ([\d.]+) %, on QM7 LGIKA \(RF\) from ([\d.]+) to ([\d.]+) RMSE, where "
                  r"i.i.d. frequencies of the same width give ([\d.]+) %, ([\d.]+) % and ([\d.]+)", readme)
    assert m, "the README should state the paper-width second layer's numbers"
    stated = [float(v) for v in m.groups()]
    measured = [nys["accuracy"], nys["accuracy_2layer_orth"], nys["paper_2layer"], rf["accuracy"],
                rf["accuracy_2layer_orth"], q["rmse"], q["rmse_2layer_orth"], nys["accuracy_2layer_paper"],
                rf["accuracy_2layer_paper"], q["rmse_2layer_paper"]]
    assert stated == [round(v, 2) for v in measured]
    assert nys["accuracy_2layer_orth"] >= nys["paper_2layer"]  # the sentence's "meets"
    unit = rows[("lgika_rf_r100_qmc_unit", 14000)]
    m = re.search(r"On digits scaled to unit norm, which the validation split prefers for that row, LGIKA \(RF\) goes "
                  r"from ([\d.]+) % to ([\d.]+) % with i.i.d. frequencies \(the paper's ([\d.]+) %\) and to ([\d.]+) % "
                  r"with orthogonal ones", readme)
    assert m, "the README should state the second layer on the unit-norm digits"
    assert [float(v) for v in m.groups()] == [round(v, 2) for v in (
        unit["accuracy"], unit["accuracy_2layer_paper"], unit["paper_2layer"], unit["accuracy_2layer_orth"])]
    assert unit["valid"] > rf["valid"]  # "which the validation split prefers"
    unys = rows[("lgika_nys_r100_qmc_unit", 7000)]
    m = re.search(r"and LGIKA \(Nys\) from ([\d.]+) % to ([\d.]+) % and ([\d.]+) % \(the paper's ([\d.]+) %\)", readme)
    assert m, "the README should state the Nyström row's second layer on the unit-norm digits"
    assert [float(v) for v in m.groups()] == [round(v, 2) for v in (
        unys["accuracy"], unys["accuracy_2layer_paper"], unys["accuracy_2layer_orth"], unys["paper_2layer"])]
    assert unys["valid"] > nys["valid"]


def test_rotated_mnist_headline_is_the_summary_of_its_stored_rows():
    """The recorded headline of Table 2 is what the current summary makes of the recorded rows (2nd-layer cells:
    orthogonal, i.i.d., hyperkernel; rows beyond the paper at the paper's size only)."""
    res = read_json(RESULTS / "raj2017" / "rotated_mnist.json")
    assert raj2017._image_heads(res["data"]["rows"], raj2017.PAPER_MNIST) == res["headline"]
    beyond = [h["name"] for h in res["headline"] if "[beyond paper] accuracy % (D=" in h["name"]
              or "(the paper's sampling) accuracy % (D=" in h["name"]]
    assert beyond and all("(D=14000)" in n or "(D=7000)" in n for n in beyond)


def test_generated_tables_have_as_many_cells_in_every_row_as_in_their_header():
    """A literal '|' in a cell (|G|, |<Φx, Φz>|) must be escaped, or the row splits into more cells than its table
    has columns; every markdown table of the pages (generated or not) keeps its header's width."""
    import re

    split = re.compile(r"(?<!\\)\|")
    pages = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    checked = 0
    for page in pages:
        width, fenced = None, False
        for n, line in enumerate(page.read_text().splitlines(), 1):
            fenced ^= line.startswith("```")
            if fenced or not line.startswith("|"):
                width = None
                continue
            cells = len(split.split(line.strip())) - 2
            if width is None:
                width = cells
            assert cells == width, f"{page.name}:{n} has {cells} cells where its table has {width}: {line[:120]}"
            checked += 1
    assert checked > 500
