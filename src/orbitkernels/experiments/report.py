"""The results page: every reproduction's headline cells beside the papers' numbers.

Run ``python -m orbitkernels.experiments.report`` (or call :func:`render_results`)
to regenerate ``docs/results.md`` from ``results/*/*.json``, so the numbers shown
are exactly the numbers measured.
"""
from __future__ import annotations

import os
import re
import string
import sys
import time
from pathlib import Path

from ..utils.errors import reading_results
from ..utils.io import atomic_write_bytes, atomic_write_json, read_json
from . import page_of
from ._runner import default_results_dir

__all__ = ["collect_headlines", "render_results", "render_readme_block", "has_marked_block", "update_marked_block",
           "paper_folder", "write_page", "fill_notes", "notes_lines", "md_cell", "render_probes", "probe_pointers",
           "PROBES_PAGE", "main"]

#: The page whose generated block (``<!-- probes:begin -->`` ... ``<!-- probes:end -->``) lists every probe.
PROBES_PAGE = "docs/fidelity.md"

TITLES = {
    "mroueh2015": "Mroueh, Voinea & Poggio 2015 — group-invariant CDF features",
    "raj2017": "Raj et al. 2017 — local group-invariant orbit embeddings",
    "teo2007": "Teo et al. 2007 — convex learning with invariances",
    "molecules3d": "3-D molecular orbit features (beyond the papers: targets from the scattering anchor)",
    "bench": "Benchmarks",
}

#: the papers reproduced; other folders (molecules3d, bench) compare with targets of their own
THE_PAPERS = ("mroueh2015", "raj2017", "teo2007")


def collect_headlines(results_dir="results"):
    """``{paper: [(experiment, result_dict), ...]}`` for every final (non-quick) results file."""
    out = {}
    for path in sorted(Path(results_dir).glob("*/*.json")):
        if path.name.endswith(".partial.json") or path.stem.endswith("_quick"):
            continue
        with reading_results(path):  # skipped, a damaged file left its cells out of the summary without a word
            res = read_json(path)
            if not isinstance(res, dict) or not res.get("headline") or res.get("quick") is True:
                continue  # a quick run renamed to <name>.json was reported as the paper's run
            if not isinstance(res["headline"], list) or not all(isinstance(c, dict) for c in res["headline"]):
                raise TypeError("its headline is not a list of cells")
        out.setdefault(path.parent.name, []).append((path.stem, res))
    return out


def format_value(v, spec=".4g"):
    """A table cell's number: floats with ``spec``, None as a dash, anything else as ``str``."""
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:{spec}}"
    return str(v)


_fmt = format_value


def md_cell(text):
    """A table cell: a literal '|' (as in |<Φx, Φz>|) would split the row."""
    return str(text).replace("|", "\\|")


def _verdict(cell):
    ours, paper = cell.get("ours"), cell.get("paper")
    if not isinstance(ours, (int, float)) or not isinstance(paper, (int, float)):
        return ""
    if cell.get("better") == "closer":
        tol = cell.get("tolerance", 0.1 * abs(paper))
        return "matches" if abs(ours - paper) <= tol else "differs"
    better = ours >= paper if cell.get("better") == "higher" else ours <= paper
    if not better and abs(ours - paper) <= cell.get("tolerance", 0.0):
        return "matches (within tolerance)"
    return "meets or beats" if better else "below" if cell.get("better") == "higher" else "above"


#: verdicts of a cell that meets the paper's number (``_verdict``); every other non-empty verdict falls short of it
MEETS = ("meets or beats", "matches (within tolerance)", "matches")


def verdict_counts(found):
    """``{paper: (compared, meeting)}``: the headline cells with a verdict against a paper's number, and how many of
    them meet it (:data:`MEETS`); papers without such a cell are left out."""
    out = {}
    for paper, items in found.items():
        verdicts = [_verdict(cell) for _, res in items for cell in res["headline"]]
        verdicts = [v for v in verdicts if v]
        if verdicts:
            out[paper] = (len(verdicts), sum(v in MEETS for v in verdicts))
    return out


def papers_total(counts):
    """``(compared, meeting)`` over the three papers of :func:`verdict_counts`'s ``counts``, or None without any."""
    papers = [c for p, c in counts.items() if p in THE_PAPERS]
    return (sum(c[0] for c in papers), sum(c[1] for c in papers)) if papers else None


def _summary(found):
    counts = verdict_counts(found)
    if not counts:
        return []
    lines = ["## Summary", "",
             "Headline cells with a number of the paper to compare with, and how many meet it (meet or beat, or "
             "match within the cell's tolerance); the reasons for each cell short of it are in "
             "[fidelity.md](fidelity.md). Rows below the papers' total compare with targets of their own.", "",
             "| paper | cells compared | meet the paper | short of it | share meeting |",
             "| --- | --- | --- | --- | --- |"]
    def row(name, n, m):
        return f"| {name} | {n} | {m} | {n - m} | {100 * m / n:.1f} % |"

    lines += [row(TITLES.get(p, p), *counts[p]) for p in counts if p in THE_PAPERS]
    total = papers_total(counts)
    if total:
        lines.append(row("**the three papers**", *total))
    lines += [row(TITLES.get(p, p), *counts[p]) for p in counts if p not in THE_PAPERS]
    return lines + [""]


def render_results(results_dir="results"):
    """Markdown of all headline cells: a summary of the verdicts, then one table per paper."""
    lines = ["# Reproduction results", "",
             "Generated by `orbitkernels report` from `results/*/*.json`; "
             "each row links to the experiment's file (configuration, seeds, wall time, every plotted number). "
             "The per-paper pages in `docs/reproductions/` show the figures.", ""]
    found = collect_headlines(results_dir)
    if not found:
        quick = sorted(Path(results_dir).glob("*/*_quick.json"))
        lines.append("No results yet: run `orbitkernels reproduce <paper>`."
                     + (f" The {len(quick)} quick runs here (`*_quick.json`) are checks of the pipeline on tiny "
                        "configurations and are not reported." if quick else ""))
    lines += _summary(found)
    for paper, items in found.items():
        lines += [f"## {TITLES.get(paper, paper)}", "", "| experiment | cell | ours | paper | better | |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for name, res in items:
            for cell in res["headline"]:
                lines.append(f"| [{name}](../results/{paper}/{name}.json) | {md_cell(cell.get('name'))} | "
                             f"{_fmt(cell.get('ours'))} | {_fmt(cell.get('paper'))} | {cell.get('better', '')} | "
                             f"{_verdict(cell)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def render_readme_block(results_dir="results"):
    """The README's results table: every headline cell that has a number to compare with (the benchmarks' files
    left out), after a line counting how many cells of the three papers meet their number; without any such
    cell, a line saying how to make results.

    Short on purpose; the full tables are in ``docs/results.md`` and ``docs/reproductions/``.
    """
    found = collect_headlines(results_dir)
    lines = ["| paper | experiment | cell | ours | paper's | |", "| --- | --- | --- | --- | --- | --- |"]
    n = 0
    for paper, items in found.items():
        if paper == "bench":
            continue
        for name, res in items:
            for cell in res["headline"]:
                if cell.get("paper") is None:
                    continue
                lines.append(f"| {paper} | [{name}]({page_of(paper)}) | {md_cell(cell.get('name'))} | "
                             f"{_fmt(cell.get('ours'))} | {_fmt(cell.get('paper'))} | {_verdict(cell)} |")
                n += 1
    if not n:
        return "No reproduction results yet: run `orbitkernels reproduce <paper>`, then `orbitkernels report`.\n"
    summary = papers_total(verdict_counts(found))
    if summary:
        total, meeting = summary
        lines = [f"{meeting} of the {total} cells of the three papers with a number to compare with meet it "
                 f"({100 * meeting / total:.1f} %; per paper: [docs/results.md](docs/results.md#summary)).", ""] + lines
    return "\n".join(lines) + "\n"


def _block_span(doc, name):
    """Where the text of ``doc``'s ``<!-- name:begin/end -->`` block starts and ends, or None without the markers."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in doc or end not in doc:
        return None
    return doc.index(begin) + len(begin), doc.index(end)


def has_marked_block(path, name):
    """Whether ``path`` is a file with the block :func:`update_marked_block` fills."""
    path = Path(path)
    return path.is_file() and _block_span(path.read_text(), name) is not None


def update_marked_block(path, name, text):
    """Replace what stands between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in ``path``.

    Returns whether the file changed; a file without the markers is left alone (returns False).
    """
    path = Path(path)
    if not path.exists():
        return False
    doc = path.read_text()
    span = _block_span(doc, name)
    if span is None:
        return False
    a, b = span
    new = doc[:a] + "\n" + text.rstrip("\n") + "\n" + doc[b:]
    if new != doc:
        atomic_write_bytes(path, new.encode())
    return new != doc


def paper_folder(results_dir, paper):
    """``<results_dir>/<paper>`` when ``results_dir`` is a results root, else ``results_dir`` itself
    (a paper's folder given directly); the default root is :func:`default_results_dir`."""
    root = Path(results_dir) if results_dir is not None else default_results_dir()
    return root / paper if (root / paper).is_dir() else root


def page_intro(paper, title):
    """Title and provenance lines that open a paper's generated reproduction page."""
    return [f"# Reproduction: {title}", "",
            f"Generated by `orbitkernels.experiments.{paper}.render_markdown` from the JSON files in "
            f"`results/{paper}/`; do not edit by hand. Each experiment runs with "
            f"`orbitkernels reproduce {paper} --experiment <name>` (`--quick` for the tiny version the tests run).",
            ""]


def _run_facts(res):
    return [f"Library {res['library_version']}, wall time {res['wall_time_s'] / 60:.1f} min, "
            f"seed {res['config'].get('seed')}.", ""]


def _not_run(name, path):
    quick = path.with_name(f"{path.stem}_quick.json")
    also = (f"; `{quick.name}`, a quick run, is a check of the pipeline on a tiny configuration, not reported"
            if quick.is_file() else "")
    return [f"*Not run yet* (`{path.name}` missing{also}).", ""]


def notes_lines(res):
    """The **Notes.** paragraph of a results file, as page lines (none when it has no notes)."""
    return [f"**Notes.** {res['notes']}", ""] if res.get("notes") else []


def experiment_section(paper, name, claim, folder, *, run_facts=_run_facts, missing=_not_run, quick=False):
    """Heading, the paper's claim, run facts and figure of one experiment's page section.

    ``run_facts(result)`` and ``missing(name, path)`` give the lines after the claim (defaults: library,
    wall time and seed; "not run yet"). Reads ``<folder>/<name>.json`` (``<name>_quick.json`` when
    ``quick``). Returns ``(lines, result)``; ``result`` is None when the file does not exist yet.
    """
    path = Path(folder) / (f"{name}_quick.json" if quick else f"{name}.json")
    lines = [f"## {name}", "", f"**Paper.** {claim}", ""]
    if not path.exists():
        return lines + missing(name, path), None
    res = read_json(path)
    lines += run_facts(res)
    if res.get("figure"):
        lines += [f"![{name}](../../results/{paper}/{res['figure']})", ""]
    return lines, res


def render_paper_page(paper, title, claims, results_dir, *, headline, tables, intro=None, run_facts=_run_facts,
                      missing=_not_run, notes=notes_lines, quick=False):
    """A paper's reproduction page from ``<results_dir>/<paper>/<experiment>.json``, one section per claim.

    Every section is: heading, the paper's claim, ``run_facts(result)`` (or ``missing(name, path)`` when the
    results file is absent), the figure, ``headline(cells)``, ``tables(name, data)`` and ``notes(result)``,
    each a list of lines; ``intro`` (lines) opens the page (default :func:`page_intro`). The three papers
    differ only in these pieces. ``quick`` renders the ``<name>_quick.json`` files the tests write.
    """
    folder = paper_folder(results_dir, paper)
    lines = page_intro(paper, title) if intro is None else list(intro)
    for name, claim in claims.items():
        with reading_results(Path(folder) / (f"{name}_quick.json" if quick else f"{name}.json")):
            section, res = experiment_section(paper, name, claim, folder, run_facts=run_facts, missing=missing,
                                              quick=quick)
            lines += section
            if res is None:
                continue
            lines += headline(res["headline"]) + [""]
            lines += tables(name, res["data"])
            lines += notes(res)
        lines += probe_pointers(folder, name)
    return "\n".join(lines).rstrip() + "\n"


def probe_pointers(folder, experiment):
    """Lines naming the probes of ``experiment`` (``<folder>/*_probes.json`` whose ``experiment`` field names it):
    the question each asks and its script; their tables are on :data:`PROBES_PAGE`."""
    out = []
    for path in sorted(Path(folder).glob("*_probes.json")):
        with reading_results(path):
            res = read_json(path)
            if res.get("experiment") == experiment:
                script, n = res.get("script", "(script not recorded)"), len(res.get("variants") or {})
                out.append(f"- {md_cell(res.get('protocol', path.stem))} `{script}`, {n} variants.")
    if not out:
        return []
    return ["**Probes** of the gaps (tables on the [fidelity page](../fidelity.md)):", ""] + out + [""]


_BLOCK = re.compile(r"<!--\s*(note|list):\s*(\w+)(?:\s+sep=\"([^\"]*)\")?\s*-->")
_OPTIONAL = re.compile(r"\[\[(.*?)\]\]", re.S)
_FORMATTER = string.Formatter()


def _parse_notes(text):
    """``{name: (kind, separator, body)}`` of a notes template, in file order."""
    text = re.sub(r"<!--(?!\s*(?:note|list):).*?-->", "", text, flags=re.S)  # plain comments: for the reader only
    marks = list(_BLOCK.finditer(text))
    blocks = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = " ".join(line.strip() for line in text[m.end():end].splitlines() if line.strip())
        blocks[m.group(2)] = (m.group(1), m.group(3) if m.group(3) is not None else ", ", body)
    return blocks


def _fill(body, values, blocks):
    """One block's text: optional ``[[...]]`` segments kept only when all their fields have a value (not None),
    list fields rendered through their ``list`` block, then ``str.format``."""
    def fields(text):
        return [f.split(".")[0].split("[")[0] for _, f, _, _ in _FORMATTER.parse(text) if f]

    body = _OPTIONAL.sub(lambda m: m.group(1) if all(values.get(f) is not None for f in fields(m.group(1))) else "",
                         body)
    vals = dict(values)
    for f in fields(body):
        if f not in vals or vals[f] is None:
            raise KeyError(f"notes template field {f!r} has no value")
        if f in blocks and blocks[f][0] == "list":
            _, sep, item = blocks[f]
            vals[f] = sep.join(_fill(item, v, blocks) for v in vals[f])
    return body.format_map(vals)


def fill_notes(template, values):
    """Prose about results, written in Markdown, with its numbers filled in from the results.

    ``template`` (text) holds ``<!-- note: NAME -->`` blocks (one paragraph each, in order) and
    ``<!-- list: NAME sep=", " -->`` blocks (the text of one item of a list field ``{NAME}``); fields are
    ``str.format`` fields (``{rmse:.2f}``) and ``[[...]]`` marks a segment that is left out when one of its
    fields is None. ``values[NAME]`` is a dict of fields (or a list of them: the note repeats) for each note;
    a note without values is left out. The notes are joined by single spaces into one paragraph.
    """
    blocks = _parse_notes(template)
    out = []
    for name, (kind, _, body) in blocks.items():
        if kind != "note" or not values.get(name):
            continue
        items = values[name] if isinstance(values[name], list) else [values[name]]
        out += [_fill(body, v, blocks) for v in items]
    return " ".join(out)


def _probe_cell(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    return md_cell(format_value(v))


def render_probes(results_dir="results"):
    """Tables of every probe file ``results/<paper>/*_probes.json``: one row per variant, one column per scalar
    field the variants recorded (the machine's load average left out), headed by the question the probe asks
    (its ``protocol``) and the committed script that wrote it (its ``script``)."""
    root = Path(results_dir)
    out = []
    for path in sorted(root.glob("*/*_probes.json")):
        with reading_results(path):
            res = read_json(path)
            variants = res.get("variants") or {}
            cols = []
            for v in variants.values():
                cols += [k for k, x in v.items() if k not in cols and k != "load_avg_1min"
                         and (x is None or isinstance(x, (int, float, str, bool)))]
            rel = path.relative_to(root).as_posix()
            out += [f"### {md_cell(res.get('protocol', path.stem))}", "",
                    f"Script `{res.get('script', '(not recorded)')}`; results `results/{rel}`"
                    f" ({len(variants)} variants).", ""]
            if variants:
                out += ["| variant | " + " | ".join(md_cell(c) for c in cols) + " |",
                        "|---" * (len(cols) + 1) + "|"]
                out += [f"| {md_cell(k)} | " + " | ".join(_probe_cell(v.get(c)) for c in cols) + " |"
                        for k, v in variants.items()]
                out.append("")
    if not out:
        return "No probe results yet.\n"
    return "\n".join(out).rstrip("\n") + "\n"


class ProbeFile:
    """A probe's results file, in the format :func:`render_probes` reads: ``protocol`` (the question), ``script``
    (the committed script that writes it), ``experiment`` (the reproduction whose gap it probes), any other
    settings, and ``variants``. Each finished variant is written at once and skipped on a rerun, so a probe
    can be interrupted and resumed.
    """

    def __init__(self, path, *, protocol, script, experiment, **settings):
        self.path = Path(path)
        self.store = read_json(self.path) if self.path.exists() else {"protocol": protocol, **settings,
                                                                        "variants": {}}
        self.store.setdefault("script", script)
        self.store.setdefault("experiment", experiment)

    def has(self, key):
        """Whether variant ``key`` is stored."""
        return key in self.store["variants"]

    def save(self, key=None, result=None):
        """Store ``result`` as variant ``key`` (stamped with the machine's load average) and write the file,
        merged with the variants on disk now: several processes may run different variants of one probe."""
        if key is not None:
            result["load_avg_1min"] = round(os.getloadavg()[0], 2)
            self.store["variants"][key] = result
            print(key, result, flush=True)
        if self.path.exists():
            self.store["variants"] = {**read_json(self.path).get("variants", {}), **self.store["variants"]}
        atomic_write_json(self.path, self.store)

    def record(self, key, compute):
        """``compute()`` -> a dict of results, timed into ``seconds``; skipped when ``key`` is stored."""
        if self.has(key):
            return
        t = time.perf_counter()
        result = compute()
        result["seconds"] = round(time.perf_counter() - t, 1)
        self.save(key, result)


def write_page(text, path):
    """Write a generated page atomically (folders made as needed) and return its text."""
    atomic_write_bytes(Path(path), text.encode())
    return text


def main(argv=None):
    """``python -m orbitkernels.experiments.report [RESULTS_DIR [OUT]]``: write :func:`render_results` of
    ``RESULTS_DIR`` (default ``results``) to ``OUT`` (default ``docs/results.md``); returns 0."""
    argv = sys.argv[1:] if argv is None else argv
    results_dir = argv[0] if argv else "results"
    out = Path(argv[1]) if len(argv) > 1 else Path("docs/results.md")
    atomic_write_bytes(out, render_results(results_dir).encode())
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
