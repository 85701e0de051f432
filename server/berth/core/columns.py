"""Build many instances of a frozen, slotted dataclass at once, one column per field.

Reading a trace builds a job object per line: a quarter of a million for SDSC-BLUE. A
frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, a
Python-level call per field per object, and that was most of the time spent reading a
trace. Here each field is filled for every object by mapping the slot's own descriptor
over the column, which runs at C speed with no Python frame per object; the objects
are as frozen as any other (the descriptor is what ``object.__setattr__`` uses too).
Nothing is validated: callers pass values the class's ``__init__`` would have kept
as they are (see :func:`berth.core.model.jobs_of_columns`). Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from itertools import repeat
from typing import Any, TypeVar

T = TypeVar("T")


def build_frozen(cls: type[T], count: int, columns: Mapping[str, Iterable[Any]]) -> list[T]:
    """``count`` instances of ``cls``; ``columns`` gives every slot's values in order
    (an iterable of at least ``count`` values each, e.g. ``itertools.repeat(x)``).

    Raises ``TypeError`` if ``columns`` does not name exactly the slots of ``cls``, so a
    field added later cannot be left unset.
    """
    slots = set(getattr(cls, "__slots__", ()))
    if set(columns) != slots:
        missing, extra = sorted(slots - set(columns)), sorted(set(columns) - slots)
        raise TypeError(
            f"{cls.__name__}: columns must name every slot (missing {missing}, extra {extra})"
        )
    objects: list[T] = list(map(object.__new__, repeat(cls, count)))
    for name, values in columns.items():
        deque(map(getattr(cls, name).__set__, objects, values), maxlen=0)
    return objects
