"""The REST API page's examples (docs/api.md), the shell's and the Python one for agents, run against a live server
with a token, as a new user would."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from django.core.management import call_command

from memory.web.tokens import create_token
from tests.api.test_activity import exporting_api_searches
from tests.engine.test_activity_otlp import attributes_of
from tests.web.test_docs import page, python_blocks, run_example


def test_the_agent_example_runs_against_the_api(live_server, django_db_serialized_rollback, curator, monkeypatch):
    # The live server needs a transactional database, emptied after the test: serialized rollback
    # restores what the migrations wrote (the role groups) for the tests that come after.
    [example] = [block for block in python_blocks(page("api.md")) if "httpx.Client(" in block]
    monkeypatch.setenv("OAM_URL", live_server.url)
    made = io.StringIO()  # the token as the page says to make one: manage.py oam_token create, its last line
    call_command("oam_token", "create", curator.username, "--name", "docs", "--role", "curator", stdout=made)
    monkeypatch.setenv("OAM_TOKEN", made.getvalue().splitlines()[-1])

    output = run_example(example, "docs/api.md")

    assert re.search(r"^\d\.\d{3}  My laptop is a ThinkPad X1, and I work nights\.$", output, flags=re.MULTILINE)
    assert "<content>My laptop is a ThinkPad X1, and I work nights.</content>" in output


@pytest.mark.skipif(shutil.which("curl") is None, reason="the shell example needs curl")
def test_the_shell_example_corrects_a_memory_against_its_etag(
    live_server, django_db_serialized_rollback, curator, agent_memory
):
    [example] = re.findall(r"```sh\n(.*?)```", page("api.md"), flags=re.DOTALL)
    made = io.StringIO()
    call_command("oam_token", "create", curator.username, "--name", "shell", "--role", "curator", stdout=made)
    # The example as written, then what it says of a stale ETag: the same PATCH again is a 412.
    script = example.replace("http://127.0.0.1:8000", live_server.url) + (
        'echo "ETAG=$ETAG"\n'
        'curl -s -o /dev/null -w "again: %{http_code}\\n" -X PATCH $OAM/memories/alice-seat/ -H "$AUTH" '
        '-H "If-Match: $ETAG" -H "Content-Type: application/json" -d \'{"content": "Lost."}\'\n'
    )
    env = {"PATH": "/usr/bin:/bin", "TOKEN": made.getvalue().splitlines()[-1]}

    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)

    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert 'ETAG="1"' in done.stdout
    patched = done.stdout[: done.stdout.index("ETAG=")].rsplit('{"id":"alice-seat"', 1)[1]  # the PATCH's answer
    assert '"content":"Alice prefers aisle seats."' in patched and '"version":2' in patched
    assert done.stdout.rstrip().endswith("again: 412")
    memory = agent_memory.get_memory("alice-seat")
    assert (memory.content, memory.version, memory.user_id) == ("Alice prefers aisle seats.", 2, "alice")


def test_the_trace_example_continues_the_agents_trace_through_the_api(
    live_server, django_db_serialized_rollback, curator, monkeypatch
):
    [example] = [block for block in python_blocks(page("activity.md")) if "traceparent" in block]
    with exporting_api_searches(monkeypatch) as collector:
        monkeypatch.setenv("OAM_URL", live_server.url)
        monkeypatch.setenv("OAM_TOKEN", create_token(curator, name="support-bot", role="curator")[1])
        output = run_example(example, "docs/activity.md")

    status, traceparent = output.split()
    _, trace_id, parent_id, _ = traceparent.split("-")
    [(_, span)] = collector.spans
    assert status == "200"
    assert (span.trace_id.hex(), span.parent_span_id.hex()) == (trace_id, parent_id)
    assert attributes_of(span)["oam.caller"] == "support-bot"
