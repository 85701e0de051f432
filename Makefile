# Berth developer entry points. Every target creates the virtual environment on demand,
# so `make run` and `make test` work on a fresh machine with only python3 and pip.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: native run run-emulated test docs docs-build browser-deps screenshots lint typecheck contracts bench chaos reproduce reproduce-cached reproduce-feitelson-weil reproduce-qops reproduce-qops-nodes reproduce-talby reproduce-leinberger reproduce-leinberger-nodes reproduce-zhou clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,experiments]'
	touch $(STAMP)

# The C availability profile (server/berth/core/_profile_native.c), compiled in place
# for this Python when it is missing or older than its sources (asked every time: a
# check of three dates); without a C compiler Berth plans with the Python profile (the
# same schedules, slower) and this says so. BERTH_NATIVE=0 chooses the Python one anyway.
native: $(STAMP)
	@$(BIN)/python tools/build_native.py

# The daemon with its embedded default (SQLite in berth-data/cluster/) and two local node
# agents running real commands: a short demo, then it serves until Ctrl-C.
run: native
	$(BIN)/berth serve --agents --demo --data-dir berth-data/cluster

# The emulated cluster instead (16 nodes, a minute of cluster time per second).
run-emulated: native
	$(BIN)/berth serve --demo --time-scale 60

lint: native
	$(BIN)/ruff format --check server clients migrations tests benchmarks experiments tools hatch_build.py
	$(BIN)/ruff check server clients migrations tests benchmarks experiments tools hatch_build.py

typecheck: native
	$(BIN)/mypy server/berth clients/berth_client tools tests benchmarks experiments hatch_build.py

contracts: native
	$(BIN)/lint-imports --no-cache

# The whole CI run must stay under 20 minutes. The tests that only compute (property,
# core, emulator and service unit tests: no process, no clock, no port) run first on
# every core (pytest-xdist); then the rest, which start daemons, agents and browsers
# and wait on real time, one at a time. The slowest of each part are listed. At most
# eight workers: a container may be shown a host's every core but given two of them.
PURE_TESTS := tests/property tests/unit/core tests/unit/emulate tests/unit/service
test: lint typecheck contracts docs-build browser-deps
	$(BIN)/python -m pytest -n auto --maxprocesses=8 --durations=10 $(PURE_TESTS)
	$(BIN)/python -m pytest --durations=25 $(addprefix --ignore=,$(PURE_TESTS))

# The documentation site (MkDocs, Material theme; mkdocs.yml): served with live reload
# on http://127.0.0.1:8000, or built into site/ with --strict (a broken link, a missing
# anchor or a page left out of the nav fails the build; make test runs it).
export NO_MKDOCS_2_WARNING := 1
docs: native
	$(BIN)/mkdocs serve

docs-build: native
	$(BIN)/mkdocs build --strict

# The browser tests drive Debian's headless Chromium (never a downloaded build). As root
# with apt reachable (CI), install it; otherwise those tests skip and say why.
browser-deps:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium and chromium-driver for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium chromium-driver >/dev/null) || echo "could not install chromium: browser tests will skip"; \
	else echo "no chromium and not root: browser tests will skip"; fi

# The README's pictures of the dashboard, taken by the browser tests.
screenshots: native browser-deps
	BERTH_SCREENSHOTS=docs/images $(BIN)/python -m pytest -q tests/browser

chaos: native
	$(BIN)/python benchmarks/chaos/failover.py

bench: native
	$(BIN)/python benchmarks/bench_replay.py
	$(BIN)/python benchmarks/bench_admission.py
	$(BIN)/python benchmarks/bench_nodes.py
	$(BIN)/python benchmarks/bench_api.py
	$(BIN)/python benchmarks/bench_gang.py
	$(BIN)/python benchmarks/bench_gang_live.py
	$(BIN)/python benchmarks/bench_arrays.py --tasks 10000 --nodes 16
	$(BIN)/python benchmarks/bench_scale.py --nodes 256 --jobs 2000 --run-seconds 30
	$(BIN)/python benchmarks/bench_scale_replay.py --policy easy --nodes 1024 --jobs 3000
	$(BIN)/python benchmarks/bench_scale_replay.py --policy conservative --nodes 1024 --jobs 3000 --compression-budget 64
	$(BIN)/python benchmarks/bench_deep_submit.py --jobs 10000
	$(BIN)/python benchmarks/bench_forecast.py

# Every page and plot in docs/results/, every run made again (it says how long first).
reproduce: native
	$(BIN)/python experiments/reproduce.py --fresh

# The same from the cached runs: only what is missing is run.
reproduce-cached: native
	$(BIN)/python experiments/reproduce.py

reproduce-feitelson-weil: native
	$(BIN)/python experiments/feitelson_weil.py

# About 1.5 CPU-hours for five seeds (MSB dominates); runs are cached in experiments/results/qops.json.
reproduce-qops: native
	$(BIN)/python experiments/qops.py

# QoPS, MSB and MRT on named nodes beside the pool (36 runs, about two minutes).
reproduce-qops-nodes: native
	$(BIN)/python experiments/qops_nodes.py

# Results are cached per run in experiments/results/; a re-run only redraws the page.
reproduce-talby: native
	$(BIN)/python experiments/talby_feitelson.py

reproduce-leinberger: native
	$(BIN)/python experiments/leinberger.py

# BL and BB on 100 nodes of K resources (20 runs, about ten minutes on two cores).
reproduce-leinberger-nodes: native
	$(BIN)/python experiments/leinberger_nodes.py

# About half an hour of CPU (the 20,000-job replays); cached per run.
reproduce-zhou: native
	$(BIN)/python experiments/zhou_brent_walsh.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis server/berth/core/_profile_native*.so
