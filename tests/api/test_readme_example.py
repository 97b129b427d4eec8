"""The README's Python example for agents, run against a live server with a token, as a new user would."""

from __future__ import annotations

import re

from memory.tokens import create_token
from tests.web.test_docs import README, python_blocks, run_example


def test_the_agent_example_runs_against_the_api(live_server, django_db_serialized_rollback, curator, monkeypatch):
    # The live server needs a transactional database, emptied after the test: serialized rollback
    # restores what the migrations wrote (the role groups) for the tests that come after.
    [example] = [block for block in python_blocks(README) if "httpx.Client(" in block]
    monkeypatch.setenv("OAM_URL", live_server.url)
    monkeypatch.setenv("OAM_TOKEN", create_token(curator, name="readme", role="curator")[1])

    output = run_example(example)

    assert re.search(r"^\d\.\d{3}  My laptop is a ThinkPad X1, and I work nights\.$", output, flags=re.MULTILINE)
    assert "<content>My laptop is a ThinkPad X1, and I work nights.</content>" in output
