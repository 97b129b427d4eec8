"""The progress bar of the long commands (oam_export, oam_import, oam_reembed), on standard error."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress_bar(desc: str, unit: str, *, disable: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A `progress(done, total)` callback for the engine, drawing one bar on standard error.

    The bar is made at the first call, when the total is known: a bar made before it would print
    its empty state ("import: 0 lines [00:00, ? lines/s]") as a stray line above the real one.
    Nothing is printed when the engine never reports (an empty store) or with `disable`.
    """
    bar: tqdm | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable, dynamic_ncols=True)
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        if bar is not None:
            bar.close()
