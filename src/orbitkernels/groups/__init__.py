"""Groups acting on data, with distributions over their elements.

See :mod:`orbitkernels.groups.base` for the protocol every group follows.
"""
from .audio import PitchShift, TimeWarp
from .base import (SAMPLINGS, Group, NotAGroupWarning, ProductGroup, TrivialGroup, can_move_to_templates,
                   resolve_elements, resolve_group, unit_points)
from .cyclic import CyclicShift
from .distributions import Discrete, Distribution, LogNormal, LogUniform, Normal, Uniform, VonMises
from .image import AffineImageGroup, ImageRotation, ImageScaling, ImageTranslation, warp_images
from .permutation import BlockPermutation, CoulombPermutation
from .polar import PolarRotation
from .rotation3d import FiniteRotation3D, Rotation3D, decode_molecules, encode_molecules

__all__ = [
    "Group", "ProductGroup", "NotAGroupWarning", "TrivialGroup", "can_move_to_templates", "resolve_group",
    "resolve_elements",
    "unit_points", "SAMPLINGS",
    "BlockPermutation", "CoulombPermutation", "CyclicShift",
    "ImageRotation", "ImageTranslation", "ImageScaling", "AffineImageGroup", "PolarRotation", "warp_images",
    "PitchShift", "TimeWarp",
    "Rotation3D", "FiniteRotation3D", "encode_molecules", "decode_molecules",
    "Distribution", "Uniform", "LogUniform", "VonMises", "Normal", "LogNormal", "Discrete",
]
