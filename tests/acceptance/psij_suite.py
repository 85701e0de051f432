"""PSI/J's own executor test suite against Berth: the acceptance run of the PSI/J executor.

Starts a daemon with two local node agents (as the agents' integration tests do: they run
as root, jobs as ``nobody``), then runs PSI/J's ``tests/test_executor.py`` from a
checkout of psij-python at the installed version, as ``nobody`` (PSI/J's tests write
files in their own home that the jobs must write too), with Debian's ``python3`` and
this environment's packages (:mod:`tests.support.nobody_env`), with
``--executors berth:single:URL``, the token in ``BERTH_TOKEN``. Not part of ``make
test`` (it needs PSI/J's test sources); see docs/workflows.md:

    git clone --depth 1 --branch 0.9.11 https://github.com/ExaWorks/psij-python /tmp/psij-python
    .venv/bin/pip install requests filelock
    .venv/bin/python tests/acceptance/psij_suite.py --psij-source /tmp/psij-python
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import RUNNER
from tests.support.nobody_env import SYSTEM_PYTHON, as_nobody, readable_site

CLIENTS = Path(__file__).resolve().parents[2] / "clients"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--psij-source", type=Path, required=True,
                        help="a checkout of psij-python (its tests/ directory is run)")  # fmt: skip
    parser.add_argument("--launcher", default="single", help="single (default), multiple")
    parser.add_argument("-k", default=None, help="only the tests pytest -k selects")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for the suite")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="berth-psij-suite-"))
    root.chmod(0o755)
    (root / "daemon").mkdir()
    cluster = Cluster(root / "daemon")
    try:
        cluster.add_agent("n1", "cpus=4,mem_gb=8")
        cluster.add_agent("n2", "cpus=4,mem_gb=8")
        site = readable_site(
            root / "env",
            ["psij-python", "pytest", "requests", "filelock"],
            ["psij", "pytest", "requests", "filelock", "berth_client.psij"],
            [CLIENTS / "berth_client", CLIENTS / "psij-descriptors"],
        )
        # PSI/J's tests, and a home for them, that nobody owns.
        suite = root / "psij"
        shutil.copytree(args.psij_source / "tests", suite / "tests")
        home = root / "home"
        home.mkdir()
        shutil.chown(suite, "nobody", "nogroup")
        for item in [home, *suite.rglob("*")]:
            shutil.chown(item, "nobody", "nogroup")
        home.chmod(0o755)
        command = [str(SYSTEM_PYTHON), "-m", "pytest", "-v", "-p", "no:cacheprovider",
                   "tests/test_executor.py",
                   f"--executors=berth:{args.launcher}:{cluster.daemon.url}"]  # fmt: skip
        if args.k:
            command += ["-k", args.k]
        env = {"PYTHONPATH": f"{site}:{suite / 'tests'}", "HOME": str(home),
               "BERTH_TOKEN": RUNNER}  # fmt: skip
        print("running, as nobody:", " ".join(command), flush=True)
        done = as_nobody(*command, env=env, cwd=str(suite), timeout=args.timeout)
        print(done.stdout)
        print(done.stderr, file=sys.stderr)
        return done.returncode
    finally:
        cluster.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
