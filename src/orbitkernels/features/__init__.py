"""Orbit feature maps (scikit-learn transformers) sharing one projection engine.

- :class:`GroupCDFFeatures`: GICDF, Mroueh, Voinea & Poggio 2015, §2
- :class:`OrbitFourierFeatures`: LGIKA random Fourier features, Raj et al. 2017, Eq. 7
- :class:`OrbitNystroem`: LGIKA Nyström features, Raj et al. 2017, Eq. 8

A second layer (Raj et al. 2017, Remark 3: a Gaussian hyperkernel on the orbit
embeddings) is scikit-learn's ``RBFSampler`` composed in a ``Pipeline``.
"""
from ..groups.base import TrivialGroup  # kept importable here (it lived in the engine)
from ._base import average_over_copies
from ._engine import ProjectionPlan
from .fourier import OrbitFourierFeatures
from .molecular import MolecularOrbitFeatures
from .gicdf import GroupCDFFeatures, sample_cdf_templates
from .nystroem import OrbitNystroem

__all__ = ["GroupCDFFeatures", "OrbitFourierFeatures", "OrbitNystroem", "MolecularOrbitFeatures", "ProjectionPlan",
           "TrivialGroup", "sample_cdf_templates", "average_over_copies"]
