"""The project's own URLs, from the installed package's metadata.

``pyproject.toml``'s ``[project.urls]`` is the one place they are written; packaging copies
them into the metadata (``Project-URL: Issues, https://...``), and everything that names a
URL (the internal-error message, ``aurane init``'s README) reads them from there. Read on
first use only: ``importlib.metadata`` is not free to import, and a normal start-up names
no URL. A source tree run without installing has no metadata, and then no URLs.
"""

from __future__ import annotations

import functools

DISTRIBUTION = "aurane"


@functools.cache
def project_urls() -> dict[str, str]:
    """Label -> URL (``Homepage``, ``Documentation``, ``Repository``, ``Issues``, ...)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:
        return {}
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip()] = url.strip()
    return urls


def project_url(label: str) -> str | None:
    """One of the project's URLs by its label in ``[project.urls]``, or None."""
    return project_urls().get(label)
