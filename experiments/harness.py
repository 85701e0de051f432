"""What every reproduction script shares: a result cache filled in parallel, and the
generated part of a results page.

Each run is a picklable configuration turned into a report by a top-level function; the
reports are cached in a JSON file as they finish (so an interrupted reproduction resumes),
and a page's text between the BEGIN/END GENERATED markers is rewritten while the
discussion around it is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"

Report = dict[str, Any]


def load_cache(path: Path) -> dict[str, Report]:
    return json.loads(path.read_text()) if path.exists() else {}


def run_missing(
    cache_path: Path,
    configurations: Sequence[Any],
    key: Callable[[Any], str],
    run_one: Callable[[Any], tuple[str, Report]],
    workers: int,
) -> dict[str, Report]:
    """Run the configurations not yet in the cache on ``workers`` processes; the cache."""
    cache = load_cache(cache_path)
    todo = [c for c in configurations if key(c) not in cache]
    print(f"{len(cache)} cached, {len(todo)} to run on {workers} workers", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_one, c): c for c in todo}
        for done, future in enumerate(as_completed(futures), start=1):
            name, report = future.result()
            cache[name] = report
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            # Write then rename, so a reader never sees a half-written cache.
            partial = cache_path.with_suffix(".partial")
            partial.write_text(json.dumps(cache, indent=1, sort_keys=True))
            os.replace(partial, cache_path)
            seconds = report.get("seconds", 0.0)
            print(f"  [{done}/{len(todo)}] {name}: {seconds:.0f} s", file=sys.stderr)
    return cache


def write_generated(page: Path, generated: str, title: str) -> None:
    """Replace the generated part of ``page`` (created with ``title`` if missing)."""
    text = page.read_text() if page.exists() else f"# {title}\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    page.write_text(f"{head}{BEGIN}\n{generated}\n{END}{tail}")


def parse_arguments(description: str | None) -> argparse.Namespace:
    """``--render`` (only redraw from the cache) and ``--workers`` (default: all cores)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--render", action="store_true", help="only redraw from the cache")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    return parser.parse_args()
