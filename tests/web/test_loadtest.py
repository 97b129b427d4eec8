"""`make loadtest` in short: bench/loadtest.py for 5 s over a small store runs the requests the
full run does, with zero errors, and prints its figures (the 60 s run is not part of
`make test`)."""

from __future__ import annotations

import subprocess
import sys

from bench._gunicorn import ROOT

ENDPOINTS = (
    "API search",
    "API memory list",
    "API edit",
    "API create",
    "API delete",
    "page: memory browser",
    "page: search",
)


def test_a_short_load_run_reports_every_endpoint_and_no_error():
    command = [sys.executable, "bench/loadtest.py", "--seconds", "5", "--memories", "200", "--users", "2"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, f"{done.stdout}\n{done.stderr[-3000:]}"
    rows = {line[:24].strip(): line.split()[-5:] for line in done.stdout.splitlines()}
    ran = {endpoint: rows[endpoint] for endpoint in ENDPOINTS if endpoint in rows}
    assert len(ran) >= 3, done.stdout  # a kind drawn rarely may not come up in 5 s on a busy machine
    for requests, errors, *_ in [*ran.values(), rows["all requests"]]:
        assert int(requests) > 0 and errors == "0", done.stdout
    assert "server peak memory (VmHWM): master" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("PASS loadtest: 0 failed requests, 0 server errors"), done.stdout
