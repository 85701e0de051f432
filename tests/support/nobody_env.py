"""Python for ``nobody``: what jobs run as on the test agents (which run as root).

Jobs cannot read this interpreter's installation under ``/root``; they run Debian's
``python3`` (the same minor version) with packages on ``PYTHONPATH``: this
environment's site-packages when ``nobody`` can read it, else a copy of just the
distributions asked for (and what they require), with directories of the checkout
(``berth_client``) beside them.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement

SYSTEM_PYTHON = Path("/usr/bin/python3")


def as_nobody(*command: str, env: dict[str, str], cwd: str = "/tmp",
              timeout: float = 60) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``command`` run as ``nobody`` with ``env`` (and ``HOME=/tmp`` unless given)."""
    settings = {"HOME": "/tmp", **env}
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env",
         *(f"{k}={v}" for k, v in settings.items()), *command],
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
    )  # fmt: skip


def readable_site(
    scratch: Path, distributions: Iterable[str], modules: Iterable[str], dirs: Iterable[Path] = ()
) -> str:
    """A ``PYTHONPATH`` from which ``nobody`` imports ``modules`` with Debian's python3:
    this environment's site-packages (with ``dirs``, checkout directories, appended), or
    a copy under ``scratch`` of ``distributions`` with what they require, and ``dirs``."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    probe = (str(SYSTEM_PYTHON), "-c", "; ".join(f"import {m}" for m in modules))
    path = ":".join([site, *(str(d.parent) for d in dirs)])
    if as_nobody(*probe, env={"PYTHONPATH": path}).returncode == 0:
        return path
    copy = scratch / "site"
    _copy_distributions(site, copy, distributions)
    for directory in dirs:
        shutil.copytree(directory, copy / directory.name, dirs_exist_ok=True)
    for item in [scratch, *copy.rglob("*")]:
        item.chmod(0o755 if item.is_dir() else 0o644)
    checked = as_nobody(*probe, env={"PYTHONPATH": str(copy)})
    assert checked.returncode == 0, checked.stderr
    return str(copy)


def _copy_distributions(site: str, copy: Path, distributions: Iterable[str]) -> None:
    """The files of ``distributions`` and of what they require (not their extras)."""
    wanted, seen = list(distributions), set()
    while wanted:
        dist = importlib.metadata.distribution(wanted.pop())
        name = dist.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for file in dist.files or ():
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and source.is_relative_to(site):
                target = copy / source.relative_to(site)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
