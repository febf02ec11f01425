"""What is in the data folder: the report behind ``orbitkernels datasets``."""
from __future__ import annotations

from ._base import DatasetChecksumError, _not_a_file, get_data_home, verify_file
from ._registry import REGISTRY

__all__ = ["dataset_status"]


def _entry_status(info, home, verify):
    form = next((f for f in ("converted", "canonical")
                 if info.files(f) and all((home / d.name).is_file() for d in info.files(f))), None)
    found = [d.name for f in ("converted", "canonical") for d in info.files(f) if (home / d.name).is_file()]
    urls = [d.url for d in info.canonical if d.url]
    entry = {
        "name": info.name, "title": info.title, "data_home": str(home), "form": form, "files": found,
        "missing": [], "verified": None, "status": "", "urls": urls, "reference": info.reference, "note": "",
    }
    blocked = [d.name for f in ("converted", "canonical") for d in info.files(f) if _not_a_file(home / d.name)]
    if blocked:  # a folder or a broken link named like a data file: loading refuses it, so say so here too
        entry["status"] = "not a file"
        entry["note"] = (f"{', '.join(blocked)} in {home} is a folder, a broken link or not a regular file; "
                         "move it away")
        return entry
    if form is None:
        entry["missing"] = [d.name for d in (info.converted or info.canonical) if not (home / d.name).is_file()]
        alternatives = " or ".join(
            ", ".join(d.name for d in info.files(f)) for f in ("converted", "canonical") if info.files(f))
        entry["status"] = "missing"
        entry["note"] = (f"put {alternatives} in {home}"
                         + (f"; or download {', '.join(urls)} (download=True in the loaders, --download in "
                            "`orbitkernels reproduce`)" if urls else ""))
        return entry
    files = info.files(form)
    entry["status"] = "found"
    unchecked = [d.name for d in files if not d.hashes]
    if unchecked:
        entry["note"] = f"no published checksum for {', '.join(unchecked)}: structure is checked when loading"
    if verify:
        try:
            results = [verify_file(home / d.name, d) for d in files]
        except DatasetChecksumError as exc:
            entry["verified"], entry["status"] = False, "checksum mismatch"
            entry["note"] = str(exc)
            return entry
        entry["verified"] = all(results)
        entry["status"] = "verified" if all(results) else "found (partly unverifiable)"
    return entry


def dataset_status(data_home=None, verify=False) -> list:
    """One dict per dataset saying what the data folder holds.

    Cheap by default: only looks at which files exist.  ``verify=True`` also
    hashes every found file (seconds for the large archives; hashes are cached
    per process).

    Parameters
    ----------
    data_home : str, os.PathLike or None, default=None
        The data folder, resolved by :func:`get_data_home`.
    verify : bool, default=False
        Also check the found files against their known checksums.

    Returns
    -------
    list of dict
        One per entry of :data:`REGISTRY`, in its order, then one for the
        synthetic Xperm.  Keys: ``name``, ``title``, ``data_home``, ``status``
        ("found", "verified", "found (partly unverifiable)", "checksum mismatch",
        "missing", "missing (can be regenerated from MNIST)", "not a file",
        "synthetic"), ``form`` ("converted" for this project's .npz,
        "canonical" for the original files, None), ``files`` (names found),
        ``missing`` (names to add), ``verified`` (True / False / None = not
        checked), ``urls`` (download addresses), ``reference``, ``note``.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> from orbitkernels.datasets import dataset_status
    >>> with tempfile.TemporaryDirectory() as home:
    ...     for entry in dataset_status(home)[:2]:
    ...         print(entry["name"], entry["status"], entry["missing"])
    ...     with open(os.path.join(home, "mnist.npz"), "wb") as f:
    ...         _ = f.write(b"not MNIST")
    ...     print(dataset_status(home)[0]["status"], dataset_status(home, verify=True)[0]["status"])
    mnist missing ['mnist.npz']
    rotated_mnist missing ['mnist_rotation_new.zip']
    found checksum mismatch
    """
    home = get_data_home(data_home)
    out = [_entry_status(info, home, verify) for info in REGISTRY.values()]
    by_name = {e["name"]: e for e in out}
    rot, mnist = by_name.get("rotated_mnist"), by_name.get("mnist")
    if rot is not None and rot["form"] is None and mnist is not None and mnist["form"] is not None:
        corrupt = mnist["verified"] is False  # a corrupt MNIST regenerates nothing: say what to fix first
        if not corrupt:
            rot["status"] = "missing (can be regenerated from MNIST)"
        rot["note"] = ("official mnist_rotation_new.zip absent; load_rotated_mnist() "
                       + ("would regenerate the set from MNIST, whose file fails its checksum (above). " if corrupt
                          else "regenerates the set from MNIST following the published protocol. ") + rot["note"])
    out.append({
        "name": "xperm", "title": "Xperm (synthetic permutation-invariant sequences)", "data_home": str(home),
        "form": None, "files": [], "missing": [], "verified": None, "status": "synthetic", "urls": [],
        "reference": ("Y. Mroueh, S. Voinea, T. Poggio. Learning with Group Invariant Features: A Kernel Perspective. "
                      "NIPS 2015, §6 (Xperm, Figure 1)."),
        "note": "generated by make_xperm(); needs no file",
    })
    return out
