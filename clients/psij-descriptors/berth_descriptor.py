"""Registers Berth's PSI/J executor (``berth_client.psij``) with PSI/J, which looks for
modules in ``psij-descriptors`` directories on ``sys.path`` (a namespace package: no
``__init__.py`` here)."""

from packaging.version import Version
from psij.descriptor import Descriptor

__PSI_J_EXECUTORS__ = [
    Descriptor(
        name="berth",
        nice_name="Berth",
        version=Version("0.1.0"),
        cls="berth_client.psij.BerthJobExecutor",
    )
]
