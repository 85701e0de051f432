"""The API tests' default client: :func:`~tests.integration.api.harness.make_api` on the
test's own directory (a module that needs other settings defines its own ``api``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.api.harness import Api, make_api


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    yield from make_api(tmp_path)
