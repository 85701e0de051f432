"""The SWF and JSONL readers fed with hostile files (Hypothesis): truncated, binary,
mangled and deeply nested. Each file is either read, or refused with a WorkloadError
that names the file and the line (and, for a bad value, the field); never anything
else, and ``berth emulate`` answers such a file with that message, not a traceback."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.emulate.traces import read_workload, swf
from berth.emulate.traces.opening import read_text, reading
from berth.emulate.workload import Workload, WorkloadError

GOOD_SWF = (
    "1 0 5 60 4 -1 -1 4 120 -1 1 7 1 1 1 -1 -1 -1\n2 10 0 30 2 -1 -1 2 60 -1 1 8 1 1 1 -1 -1 -1\n"
)
GOOD_JSONL = (
    '{"capacity": {"cpus": 8}}\n'
    '{"id": 1, "submit": 0, "runtime": 5, "estimate": 10, "resources": {"cpus": 2}}\n'
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

swf_words = st.sampled_from(["-1", "0", "1", "60", "1e400", "nan", "inf", "-inf", "x", "", "1.5",
                             "99999999999999999999999", "\x00", "é", ";", "-0.00"])  # fmt: skip
swf_lines = st.lists(swf_words, min_size=0, max_size=20).map(" ".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
job_keys = st.sampled_from(["id", "submit", "runtime", "estimate", "resources", "deadline",
                            "user", "priority", "capacity", "other"])  # fmt: skip
json_lines = st.dictionaries(job_keys, json_values, max_size=6).map(json.dumps)


def read(path: Path) -> Workload | None:
    """The workload, or None after checking the refusal names the file and a line."""
    try:
        return read_workload(path)
    except WorkloadError as error:
        message = str(error)
    assert re.match(rf"{re.escape(str(path))}:\d+: \S", message), message
    return None


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@FUZZ
@given(lines=st.lists(swf_lines, max_size=8), cut=st.integers(0, 400))
def test_mangled_swf_lines_are_read_or_refused_by_line_and_field(
    lines: list[str], cut: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        text = ("; MaxProcs: 8\n" + GOOD_SWF + "\n".join(lines) + "\n")[: cut or None]
        path = write(Path(folder), "t.swf", text.encode())
        message = ""
        try:
            read_workload(path)
        except WorkloadError as error:
            message = str(error)
        if message:
            assert re.match(rf"{re.escape(str(path))}:\d+: ", message), message
            assert "field" in message, message


@FUZZ
@given(lines=st.lists(json_lines | st.text(max_size=30), max_size=8))
def test_hostile_jsonl_is_read_or_refused_by_line(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = (GOOD_JSONL + "\n".join(lines) + "\n").encode()
        read(write(Path(folder), "t.jsonl", data))


@FUZZ
@given(data=st.binary(max_size=600), suffix=st.sampled_from(["swf", "jsonl", "swf.gz"]))
def test_binary_garbage_is_refused_not_a_traceback(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        read(write(Path(folder), f"t.{suffix}", data))


@FUZZ
@given(cut=st.integers(0, 200), flip=st.integers(0, 10_000))
def test_a_truncated_or_corrupt_gz_trace_names_the_line(cut: int, flip: int) -> None:
    packed = bytearray(gzip.compress(("; MaxProcs: 8\n" + GOOD_SWF * 20).encode()))
    packed = packed[: max(1, len(packed) - cut)]
    if flip % 3 == 0:
        packed[flip % len(packed)] ^= 0xFF
    with tempfile.TemporaryDirectory() as folder:
        read(write(Path(folder), "t.swf.gz", bytes(packed)))


def test_deep_nesting_is_refused_by_line(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.jsonl", (GOOD_JSONL + "[" * 100_000 + "\n").encode())
    with pytest.raises(WorkloadError, match=r"deep.jsonl:3: JSON nested too deeply"):
        read_workload(path)


def test_a_bad_swf_value_names_its_field(tmp_path: Path) -> None:
    path = write(tmp_path, "t.swf", GOOD_SWF.replace(" 60 4 ", " inf 4 ", 1).encode())
    with pytest.raises(WorkloadError, match=r"t.swf:1: field 4 \(run time\) must be a number"):
        read_workload(path)


@pytest.mark.parametrize(
    ("name", "data"),
    [("cut.swf.gz", gzip.compress(GOOD_SWF.encode() * 50, mtime=0)[:40]),
     ("noise.jsonl", bytes(range(256)) * 4),
     ("bad.swf", b"1 2 3\n")],
)  # fmt: skip
def test_berth_emulate_answers_a_hostile_file_with_a_message(
    tmp_path: Path, name: str, data: bytes
) -> None:
    path = write(tmp_path, name, data)
    done = subprocess.run([sys.executable, "-m", "berth.runtime.main", "emulate", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"berth emulate: {path}:"), done.stderr


# The SWF reader reads a file's whole text at once, or, when a compressed file is
# damaged, line by line as a stream (to name the line it broke at): both ways must give
# the same rows, or the same refusal. Mostly whole numbers (the inline int() reading),
# sometimes a word read field by field, odd white space and every kind of line end.
odd_swf_words = st.sampled_from(["-1.00", "007", "1_0", "+4", "x", ";", "\x00"])
plain_swf_words = st.integers(-5, 10**7).map(str)
gaps = st.sampled_from([" ", "  ", "\t", " \t"])


@st.composite
def plain_swf_lines(draw: st.DrawFn) -> str:
    """A line of 18 words (a job line; sometimes 17 or 19) with varied gaps."""
    count = draw(st.sampled_from([18] * 6 + [17, 19]))
    words = draw(st.lists(plain_swf_words, min_size=count, max_size=count))
    if draw(st.integers(0, 3)) == 0:
        words[draw(st.integers(0, count - 1))] = draw(odd_swf_words)
    spaced = [draw(gaps) + word for word in words]
    if draw(st.integers(0, 7)) == 0:
        spaced[draw(st.integers(0, count - 1))] = "\x0c" + words[0]  # str.split() splits
    return "".join(spaced) + draw(st.sampled_from(["", " ", "\t"]))


swf_texts = st.tuples(
    st.lists(plain_swf_lines() | st.sampled_from(["; MaxProcs: 8", " ; Note: x", "\x0c;", "", "  "]),
             max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
).map(lambda parts: parts[1].join(parts[0]) + parts[1])  # fmt: skip


def whole_and_streamed(path: Path) -> tuple[object, object]:
    """The SWF rows of ``path`` (or the refusal) read from its whole text, and as a stream."""
    answers: list[object] = []
    for way in ("whole", "streamed"):
        try:
            if way == "whole":
                answers.append(swf._rows(path, swf._lines(read_text(path))))
            else:
                with reading(path) as numbered:
                    answers.append(swf._rows(path, (line for _, line in numbered)))
        except WorkloadError as error:
            answers.append(str(error))
    return answers[0], answers[1]


@FUZZ
@given(text=swf_texts)
def test_an_swf_file_reads_the_same_whole_or_streamed(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        whole, streamed = whole_and_streamed(write(Path(folder), "t.swf", text.encode()))
        assert whole == streamed


def test_an_swf_job_line_is_read_whole_numbers_first_then_field_by_field(tmp_path: Path) -> None:
    text = "; MaxProcs: 100\n" + GOOD_SWF * 3 + "  3 20 0 30 2 -1 -1 2 60 -1 1 8 1 1 1 -1 -1 -1\t\n"
    path = write(tmp_path, "t.swf", text.encode())
    header, rows = swf._rows(path, swf._lines(text))
    assert header == ["; MaxProcs: 100"]
    assert rows[-1] == ("3 20 0 30 2 -1 -1 2 60 -1 1 8 1 1 1 -1 -1 -1", 3, 20, 30, 2, 2, 60, 8)
    floats = text.replace(" 60 4 ", " 60.00 4 ", 1).replace(" 120 ", " 120.5 ", 1)
    _, float_rows = swf._rows(path, swf._lines(floats))
    assert float_rows[0][1:] == (1, 0, 60, 4, 4, 120, 7), "-1.00-style numbers read as int(float)"
    assert float_rows[1:] == rows[1:]
