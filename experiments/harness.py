"""What every reproduction script shares: a result cache filled in parallel on Dask, and
the generated part of a results page.

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
from pathlib import Path
from typing import Any

from tqdm import tqdm

BEGIN, END = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"

Report = dict[str, Any]


def load_cache(path: Path) -> dict[str, Report]:
    return json.loads(path.read_text()) if path.exists() else {}


def save_cache(path: Path, cache: dict[str, Report]) -> None:
    """Write then rename, so a reader never sees a half-written cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(cache, indent=1, sort_keys=True))
    os.replace(partial, path)


def run_missing(
    cache_path: Path,
    configurations: Sequence[Any],
    key: Callable[[Any], str],
    run_one: Callable[[Any], tuple[str, Report]],
    workers: int,
    dask: str | None = None,
) -> dict[str, Report]:
    """Run the configurations not yet in the cache on Dask (``dask``: see
    :func:`berth.emulate.parallel.on_dask`; default a local cluster of ``workers``
    processes); the cache, saved as each run ends."""
    from berth.emulate.parallel import on_dask, run_all

    cache = load_cache(cache_path)
    todo = [c for c in configurations if key(c) not in cache]
    if not todo:
        return cache
    where = dask or f"a local Dask cluster of {workers} workers"
    print(f"{cache_path.stem}: {len(cache)} runs cached, {len(todo)} to run on {where}",
          file=sys.stderr)  # fmt: skip
    with (
        on_dask(dask, workers) as client,
        tqdm(total=len(todo), desc=cache_path.stem, unit="run", file=sys.stderr) as bar,
    ):
        for _, (name, report) in run_all(client, run_one, todo):
            cache[name] = report
            save_cache(cache_path, cache)
            bar.set_postfix_str(f"{name} {report.get('seconds', 0.0):.0f} s", refresh=False)
            bar.update(1)
    return cache


def start_cache(path: Path, args: argparse.Namespace) -> None:
    """``--fresh``: set the cache aside (as ``NAME.previous.json``) so every run is
    made again from scratch."""
    if getattr(args, "fresh", False) and path.exists():
        os.replace(path, path.with_suffix(".previous.json"))
        print(f"{path.name}: set aside, every run is made again", file=sys.stderr)


def write_generated(page: Path, generated: str, title: str, block: str = "") -> None:
    """Replace the generated part of ``page`` (created with ``title`` if missing); a
    page with several has them named (``block``: ``<!-- BEGIN GENERATED nodes -->``),
    each appended at the end when first written."""
    begin = BEGIN if not block else BEGIN.replace(" -->", f" {block} -->")
    end = END if not block else END.replace(" -->", f" {block} -->")
    text = page.read_text() if page.exists() else f"# {title}\n\n{begin}\n{end}\n"
    if begin not in text:
        text = f"{text.rstrip()}\n\n{begin}\n{end}\n"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    page.write_text(f"{head}{begin}\n{generated}\n{end}{tail}")


def parse_arguments(description: str | None) -> argparse.Namespace:
    """``--render`` (only redraw from the cache) and ``--workers`` (default: all cores)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--render", action="store_true", help="only redraw from the cache")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--dask",
        help="where the runs go: local (default: a Dask cluster of --workers processes), "
        "tcp://HOST:PORT (a Dask scheduler) or berth://HOST:PORT (--workers Berth jobs)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="run everything again (the cache is set aside)"
    )
    return parser.parse_args()


def run_and_render(
    description: str | None,
    cache_path: Path,
    configurations: Callable[[], Sequence[Any]],
    key: Callable[[Any], str],
    run_one: Callable[[Any], tuple[str, Report]],
    render: Callable[[dict[str, Report]], str],
    page: tuple[Path, str, str],
) -> None:
    """A reproduction's command line: run what the cache lacks (unless ``--render``),
    then rewrite the generated block of ``page`` (path, title, block name)."""
    args = parse_arguments(description)
    cache = load_cache(cache_path)
    if not args.render:
        start_cache(cache_path, args)
        cache = run_missing(cache_path, configurations(), key, run_one, args.workers, args.dask)
    path, title, block = page
    write_generated(path, render(cache), title, block=block)
