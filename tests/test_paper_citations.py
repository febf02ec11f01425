"""The docstrings cite the paper and the location they implement, and the papers say it there.

One row per implementation of a paper's formula, algorithm or experiment: the object (its docstring, read with
``inspect.getdoc``, whitespace collapsed) must contain the citation, and the cited paper's text must hold, at that
location (an equation's number, a section's span, an algorithm's, table's or figure's title), a phrase that
identifies what the docstring attributes to it.

The papers are not part of the repository. They are read from ``ORBITKERNELS_PAPERS``, else from the ``papers``
folder beside the shared data folder (CI points ``ORBITKERNELS_DATA`` at ``../shared/data``), else from
``../shared/papers`` relative to the repository, as ``conftest.shared_data_dir`` finds the data; without them the
paper-side checks are skipped (the docstring-side checks always run). Each file is recognised by the title at its
start, so a renamed or re-extracted copy still matches; a JSON copy (title, full_text, ...) is read by its
``full_text``. The texts are compared after NFKC normalisation (ligatures), case folding, and with whitespace,
PDF ``(cid:N)`` glyph codes, soft hyphens and Markdown emphasis removed, so that line breaks and the PDF
extraction's spacing do not matter.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the papers, by the title their text starts with (normalised as by :func:`_norm`)
TITLES = {
    "mroueh": "learningwithgroupinvariantfeatures",  # Mroueh, Voinea & Poggio, NIPS 2015
    "raj": "localgroupinvariantrepresentationsviaorbitembeddings",  # Raj, Kumar, Mroueh, Fletcher, Schölkopf 2017
    "teo": "convexlearningwithinvariances",  # Teo, Globerson, Roweis & Smola, NIPS 2007
}


def _norm(text):
    """Text for comparison: NFKC (ligatures, math alphanumerics), case-folded, without whitespace, PDF glyph codes
    ``(cid:N)``, soft hyphens and Markdown emphasis."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"\(cid:\d+\)", "", text).replace("\u00ad", "").replace("*", "")
    return re.sub(r"\s+", "", text.casefold())


def papers_dir():
    """The folder of the papers' texts, or None (see the module docstring)."""
    candidates = []
    if os.environ.get("ORBITKERNELS_PAPERS"):
        candidates.append(Path(os.environ["ORBITKERNELS_PAPERS"]))
    if os.environ.get("ORBITKERNELS_DATA"):
        candidates.append(Path(os.environ["ORBITKERNELS_DATA"]).parent / "papers")
    candidates.append(ROOT.parent / "shared" / "papers")
    return next((c for c in candidates if c.is_dir()), None)


def _read_paper(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            record = json.loads(text)
        except ValueError:
            return text
        if isinstance(record, dict) and isinstance(record.get("full_text"), str):
            return f"{record.get('title', '')}\n{record['full_text']}"
    return text


def load_papers(folder):
    """``{paper: [normalised text, ...]}`` for every file of ``folder`` that starts with one of :data:`TITLES`."""
    out = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.lower().startswith("readme"):
            continue
        text = _norm(_read_paper(path))
        for key, title in TITLES.items():
            if title in text[:600]:
                out.setdefault(key, []).append(text)
    return out


@dataclass(frozen=True)
class Cite:
    """``obj`` ("module" or "module:qualname") cites ``cites`` (each in its docstring, whitespace collapsed); in
    ``paper``, some occurrence of ``at`` (normalised) has every phrase of ``near`` in the ``window`` characters on
    either side of it, or, with ``until``, between it and the next ``until`` (a section's span)."""

    obj: str
    cites: tuple
    paper: str
    at: str
    near: tuple
    until: str | None = None
    window: int = 800

    @property
    def id(self):
        return f"{self.obj.rsplit(':', 1)[-1].rsplit('.', 1)[-1]}~{self.paper}:{self.at}"


M, R, T = "mroueh", "raj", "teo"
MROUEH_S2 = dict(at="2 From Group Invariant Kernels to Feature Maps", until="3 An Equivalent Expected Kernel")
RAJ_EQ7 = dict(at="(7)", near=(r"\psi_{RF}(x)", r"\frac{1}{r\sqrt{s}}", "e^{-i"))
RAJ_EQ8 = dict(at="(8)", near=("where the features are given by", r"\psi_{Nys}(x)", r"\frac{1}{r}"))
RAJ_LEMMA = dict(at="Lemma 2.1.", near=("is a unitary transformation", "Jacobian"))
RAJ_S41 = dict(at="4.1 Quantum Machine dataset", until="4.2 Rotated MNIST")
RAJ_S43 = dict(at="4.3 CIFAR-10", until="5 Related Work")
TEO_EQ10 = dict(at="(10)", near=("FSCALE", "feature deletion case (FDROP)", "element-wise product"))
TEO_ALG2 = dict(at="Algorithm 2: Pegasos for Invariances", near=("Compute constraint violator",))
TEO_ALG3 = dict(at="Algorithm 3: FSCALE(x, y, w, K, l, u)", near=("IndexSort(B)", "ascending order"))

#: The citations that matter most: one (or more) per public object implementing a paper's formula, algorithm or
#: experiment, with the identifying phrase of the cited location.
CITATIONS = [
    # --- Mroueh, Voinea & Poggio 2015 -----------------------------------------------------------------------
    Cite("orbitkernels.kernels:HaarKernel", ("Mroueh et al. 2015, Eq. 1",), M, "(1)",
         ("Define an invariant kernel K between x, z", "Haar-integration")),
    Cite("orbitkernels.features:GroupCDFFeatures", ("Mroueh et al. 2015, §2",), M,
         near=("truncated cumulative distribution function (CDF)", "define the random feature map"), **MROUEH_S2),
    Cite("orbitkernels.features:sample_cdf_templates", ("Mroueh et al. 2015, §2",), M,
         near=("Gaussian vectors (sampling with rejection)",), **MROUEH_S2),
    Cite("orbitkernels.features:sample_cdf_templates", ("Remark 1",), M, "Remark 1.",
         ("templates t, drawn uniformly on the unit sphere",), window=300),
    Cite("orbitkernels.features:average_over_copies", ("GICDF's pooling (Mroueh et al. 2015, §2)",), M,
         near=("normalized empirical CDF",), **MROUEH_S2),
    Cite("orbitkernels.experiments.mroueh2015:theorem1_bounds", ("Theorem 1, Eq. 3",), M, "(3)",
         ("Theorem 1 (Expectation)", "The following inequality holds with probability 1"), window=1500),
    Cite("orbitkernels.experiments.mroueh2015:orbit_distance", ("d_G(x, z) = (2πd)^{-1/2}",), M,
         "Theorem 1 (Expectation)", ("Define the distance dG between the orbits",), window=300),
    Cite("orbitkernels.datasets:make_xperm", ("NIPS 2015, §6 and Figure 1",), M, "Xperm (Figure 1):",
         ("all sequences of length 5 whose elements come from an alphabet of 8 characters",), window=300),
    Cite("orbitkernels.groups:BlockPermutation", ("Mroueh et al. 2015, §6 (Xperm)",), M, "Xperm (Figure 1):",
         ("globally invariant to permutation",), window=600),
    Cite("orbitkernels.groups.audio", ("Mroueh et al. 2015, §6 (TIDIGITS)",), M, "TIDIGITS (Figure 3):",
         ("pitch shifted up and down by 400 cents and warped to play at half and double speed",), window=600),
    Cite("orbitkernels.models.ridge", ("Mroueh et al. 2015 (§6)",), M, "6 Numerical Evaluation",
         ("regularized least squares (RLS)", "GURLS toolbox"), window=2000),
    Cite("orbitkernels.experiments.mroueh2015", ("Figure 1: RLS and 1-NN sample complexity on the exact Xperm",), M,
         "Figure 1: Classification accuracy as a function of training set size", ("Haar-integration kernel",),
         window=600),
    Cite("orbitkernels.experiments.mroueh2015", ("Figure 2: local rotation/translation invariance",), M,
         "Figure 2: Left Plot) Mean classification accuracy as a function of number of bins and templates",
         ("98.97%",), window=600),
    Cite("orbitkernels.experiments.mroueh2015", ("Figure 3 on FSDD",), M,
         "Figure 3: Mean classification accuracy as a function of number of bins and templates",
         ("Speaker", "Gender"), window=600),
    # --- Raj, Kumar, Mroueh, Fletcher & Schölkopf 2017 --------------------------------------------------------
    Cite("orbitkernels.kernels:HaarKernel", ("Raj et al. 2017, Eq. 3",), R, "(3)",
         ("If we take h to be the linear kernel", "hyperkernel")),
    Cite("orbitkernels.kernels:HaarKernel", ("Eq. 4 for the Haar measure",), R, "(4)",
         ("global group invariant kernel", "Haar integration kernel")),
    Cite("orbitkernels.features:OrbitFourierFeatures", ("Raj et al. 2017, Eq. 7",), R, **RAJ_EQ7),
    Cite("orbitkernels.features:MolecularOrbitFeatures", ("Raj et al. 2017, Eq. 7",), R, **RAJ_EQ7),
    Cite("orbitkernels.features:OrbitNystroem", ("Raj et al. 2017, Eq. 8",), R, **RAJ_EQ8),
    Cite("orbitkernels.features:OrbitNystroem", ("landmarks \"from the orbits\", §2.2.2",), R,
         "2.2.2 Features using Nyström approximation", ("from the original set X or from the orbit",),
         until="3 Theory"),
    Cite("orbitkernels.features", ("Raj et al. 2017, Remark 3",), R, "Remarks:",
         ("nonlinear hyperkernel", "second layer of random Fourier"), until="(4) Computational aspects"),
    Cite("orbitkernels.groups.image", ("Raj et al. 2017, Lemma 2.1",), R, **RAJ_LEMMA),
    Cite("orbitkernels.groups:warp_images", ("Lemma 2.1",), R, **RAJ_LEMMA),
    Cite("orbitkernels.groups:ImageScaling", ("Lemma 2.1",), R, **RAJ_LEMMA),
    Cite("orbitkernels.groups:VonMises", ("Raj et al. 2017 (§4.2)",), R, "4.2 Rotated MNIST",
         ("von-misses distribution", r"\kappa=0.2"), until="4.3 CIFAR-10"),
    Cite("orbitkernels.groups:LogNormal", ("Raj §4.3",), R,
         near=("log-normal distribution over the scaling group",), **RAJ_S43),
    Cite("orbitkernels.groups:Normal", ("Raj §4.3",), R,
         near=("Gaussian distribution over the translation group",), **RAJ_S43),
    Cite("orbitkernels.groups:ProductGroup", ("Raj et al. 2017, §4.3",), R,
         near=("three individual distributions",), **RAJ_S43),
    Cite("orbitkernels.groups:CoulombPermutation", ("Raj et al. 2017, §4.1",), R,
         near=("random permutations", "using the same scheme as in"), **RAJ_S41),
    Cite("orbitkernels.features:average_over_copies", ("Raj et al. 2017, §4.1",), R,
         near=("invariant to permutations of rows/columns of the Coulomb matrix",), **RAJ_S41),
    Cite("orbitkernels.experiments.raj2017", ("Table 1 (QM7)",), R, "Table 1: RMSE on Quantum Machine data",
         ("Rand-Coulomb", "GICDF"), window=600),
    Cite("orbitkernels.experiments.raj2017", ("Figure 1 (kernel approximation)",), R,
         "Figure 1: Kernel approximation error (normalized) in spectral and Frobenius norms",
         ("group transformations",), window=300),
    Cite("orbitkernels.experiments.raj2017", ("Table 2 (Rotated MNIST)",), R, "Table 2: Rotated MNIST results",
         ("P4-CNN",), window=600),
    Cite("orbitkernels.experiments.raj2017", ("Table 3 (CIFAR-10)",), R, "Table 3: CIFAR-10 results",
         ("61.02",), window=400),
    # --- Teo, Globerson, Roweis & Smola 2007 -----------------------------------------------------------------
    Cite("orbitkernels.models:InvariantSVC", ("Teo et al. (2007), Eq. (2)",), T, "(2)",
         ("This loss function finds the combination of invariance transformation and predicted target",),
         window=300),
    Cite("orbitkernels.models:InvariantSVC", ("Algorithm 1",), T, "Algorithm 1: SVMStruct for Invariances",
         ("Increase constraint set",)),
    Cite("orbitkernels.models:InvariantSVC", ("Algorithm 2",), T, **TEO_ALG2),
    Cite("orbitkernels.models:InvariantSVC", ("Eq. 5",), T, "(5)", ("regularized empirical risk functional",),
         window=300),
    Cite("orbitkernels.models.invariant_svm:InvariantSVC._fit_pegasos", ("Algorithm 2", "Teo et al. 2007, §3.2"), T,
         **TEO_ALG2),
    Cite("orbitkernels.models.invariant_svm:InvariantSVC._fit_pegasos", ("§3.2",), T,
         "3.2 An Application of Pegasos", ("Algorithm 2 is an adaptation of their method",), until="4 Related work"),
    Cite("orbitkernels.models.invariant_svm:InvariantSVC._fit_column_generation", ("Algorithm 1 (SVMStruct)",), T,
         "3.1 A Variant of SVMStruct", ("We give an instance of SVMStruct for invariances in Algorithm 1",),
         until="3.2 An Application of Pegasos"),
    Cite("orbitkernels.models.invariant_svm", ("Eqs. 6-7", "Eq. 6b"), T, "(6a)", ("subject to",), window=300),
    Cite("orbitkernels.models.invariant_svm", ("Eqs. 6-7",), T, "(7)", ("the entries of the kernel matrix K",),
         window=300),
    Cite("orbitkernels.models.invariant_svm", ("(Eq. 8;",), T, "(8)",
         ("the connection between the dual coefficients",), window=300),
    Cite("orbitkernels.models.invariant_svm", ("worst-case cost of Eq. (1) (Lemma 2)",), T, "Lemma 2",
         ("provides an upper bound on C",), window=300),
    Cite("orbitkernels.models:InvariantLinearClassifier", ("Pegasos (Algorithm 2)",), T, **TEO_ALG2),
    Cite("orbitkernels.models:InvariantLinearClassifier", ("Eq. (10)",), T, **TEO_EQ10),
    Cite("orbitkernels.models:InvariantLinearClassifier", ("Teo et al. 2007, §5.2",), T, "5.2 SPAM Filtering",
         ("FSCALE", "FDROP"), until="6 Summary"),
    Cite("orbitkernels.models:fscale_worst_case", ("Algorithm 3, FSCALE(x, y, w, K, l, u)",), T, **TEO_ALG3),
    Cite("orbitkernels.models:fscale_worst_case", ("Eq. (10)",), T, **TEO_EQ10),
    Cite("orbitkernels.models:worst_case_scaling", ("Eq. (10)", "Algorithm 3"), T, **TEO_ALG3),
    Cite("orbitkernels.models.feature_scaling", ("The invariance class of Eq. (10)",), T, **TEO_EQ10),
    Cite("orbitkernels.experiments.teo2007:mnist_transformations", ("§5.1",), T,
         "5.1 Handwritten Digits Recognition", ("twenty invariance transformations",), until="5.2 SPAM Filtering"),
    Cite("orbitkernels.experiments.teo2007", ("Figure 1: STD-SVM",), T,
         "Figure 1: Results for the MNIST handwritten digits recognition task", ("VIR-SVM", "Invar-SVM"), window=400),
    Cite("orbitkernels.experiments.teo2007", ("Table 1 on Ling-Spam",), T,
         "Table 1: SPAM filtering results on ecml06a-eval", ("FSCALE", "83.71"), window=400),
]


def _squash(text):
    return " ".join(text.split())


def _resolve(spec):
    module, _, qualname = spec.partition(":")
    obj = importlib.import_module(module)
    for part in filter(None, qualname.split(".")):
        obj = getattr(obj, part)
    return obj


def paper_texts(key):
    """The pages of one paper (``load_papers``' key: "mroueh", "raj", "teo") for a test that quotes it; the test
    is skipped where the papers are not (they are not part of the repository)."""
    folder = papers_dir()
    if folder is None:
        pytest.skip("the papers are not part of the repository: no ../shared/papers (nor ORBITKERNELS_PAPERS) here")
    texts = load_papers(folder).get(key)
    if not texts:
        pytest.skip(f"no text of the {key} paper in {folder}")
    return texts


@pytest.fixture(scope="module")
def papers():
    folder = papers_dir()
    if folder is None:
        pytest.skip("the papers are not part of the repository: no ../shared/papers (nor ORBITKERNELS_PAPERS) here")
    return load_papers(folder)


@pytest.mark.parametrize("row", CITATIONS, ids=[c.id for c in CITATIONS])
def test_docstring_cites_the_location(row):
    doc = _squash(inspect.getdoc(_resolve(row.obj)) or "")
    missing = [c for c in row.cites if _squash(c) not in doc]
    assert not missing, f"{row.obj}'s docstring no longer cites {missing}"


@pytest.mark.parametrize("row", CITATIONS, ids=[c.id for c in CITATIONS])
def test_paper_says_it_at_that_location(row, papers):
    if row.paper not in papers:
        pytest.skip(f"no text of the {row.paper} paper (title {TITLES[row.paper]!r}) in {papers_dir()}")
    at, near = _norm(row.at), [_norm(p) for p in row.near]
    for text in papers[row.paper]:
        for m in re.finditer(re.escape(at), text):
            if row.until is None:
                span = text[max(0, m.start() - row.window): m.end() + row.window]
            else:
                end = text.find(_norm(row.until), m.end())
                span = text[m.end(): end if end >= 0 else len(text)]
            if all(p in span for p in near):
                return
    found = any(at in text for text in papers[row.paper])
    raise AssertionError(f"{row.paper}: {row.at!r} {'has not' if found else 'is not in the text, nor'} "
                         f"{list(row.near)} {'until ' + repr(row.until) if row.until else 'near it'} "
                         f"(cited by {row.obj} as {list(row.cites)})")


def test_every_paper_is_found(papers):
    """The folder holds the three papers (a missing one would silently skip its rows)."""
    assert set(papers) == set(TITLES), f"papers found: {sorted(papers)}; expected {sorted(TITLES)}"
