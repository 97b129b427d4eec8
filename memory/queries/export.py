"""Exports streamed to a download (the dashboard's /settings/transfer/export/): a read of the
store, or of one scope, as an oam-export file (memory.engine.transfer), and the file's name.
Imports, which write, are memory.curation.import_jobs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from memory.engine import AgentMemory, export_lines


def export_file_name(scope: dict[str, str], day: Any) -> str:
    """oam-export-<scope>-<date>.jsonl: `store`, or `user-<id>` (the id's characters that are not
    safe in a file name replaced by "-")."""
    if not scope:
        label = "store"
    else:
        [(name, value)] = scope.items()
        label = f"{name.removesuffix('_id')}-{re.sub(r'[^A-Za-z0-9._-]+', '-', value).strip('-.')[:80] or 'id'}"
    return f"oam-export-{label}-{day:%Y-%m-%d}.jsonl"


def export_stream(agent_memory: AgentMemory, scope: dict[str, str]) -> tuple[dict[str, int], Iterator[bytes]]:
    """The export's counts (read now: the snapshot is taken before the answer starts) and its
    lines as bytes, the header first, for a StreamingHttpResponse."""
    lines = export_lines(agent_memory, **scope)
    header = next(lines)

    def stream() -> Iterator[bytes]:
        yield header.encode("utf-8")
        for line in lines:
            yield line.encode("utf-8")

    return json.loads(header)["counts"], stream()
