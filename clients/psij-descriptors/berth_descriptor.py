"""Registers Berth's PSI/J executor (``berth_client.psij``) with PSI/J, which looks for
modules in ``psij-descriptors`` directories on ``sys.path`` (a namespace package: no
``__init__.py`` here) and loads the executor from beside that directory. An editable
install also puts a copy of this file in site-packages, where ``berth_client`` is not:
that copy registers nothing (the one in the source tree does)."""

from pathlib import Path

from packaging.version import Version
from psij.descriptor import Descriptor

_BESIDE = Path(__file__).resolve().parent.parent / "berth_client" / "psij.py"

__PSI_J_EXECUTORS__ = (
    [
        Descriptor(
            name="berth",
            nice_name="Berth",
            version=Version("0.1.0"),
            cls="berth_client.psij.BerthJobExecutor",
        )
    ]
    if _BESIDE.exists()
    else []
)
