"""Groups acting on data, with distributions over their elements.

See :mod:`orbitkernels.groups.base` for the protocol every group follows.
"""
from .audio import PitchShift, TimeWarp
from .base import Group, ProductGroup, can_move_to_templates
from .cyclic import CyclicShift
from .distributions import Discrete, Distribution, LogNormal, LogUniform, Normal, Uniform, VonMises
from .image import AffineImageGroup, ImageRotation, ImageScaling, ImageTranslation, warp_images
from .permutation import BlockPermutation, CoulombPermutation

__all__ = [
    "Group", "ProductGroup", "can_move_to_templates",
    "BlockPermutation", "CoulombPermutation", "CyclicShift",
    "ImageRotation", "ImageTranslation", "ImageScaling", "AffineImageGroup", "warp_images",
    "PitchShift", "TimeWarp",
    "Distribution", "Uniform", "LogUniform", "VonMises", "Normal", "LogNormal", "Discrete",
]
