"""Secrets and personal data on the dashboard (/review/sensitive/): the issue's check. A memory
with a test card number and an example cloud key, written by an agent process through the
engine, shows in the queue masked; Redact removes both from the record, its history and its
activity; Not sensitive takes a value off the queue for good; `refuse` makes the same write fail
cleanly, through the engine, the dashboard and the API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from memory import services
from memory.models import CurationEntry, SensitiveDismissal

ROOT = Path(__file__).resolve().parents[2]
CARD, KEY = "4111 1111 1111 1111", "AKIAIOSFODNN7EXAMPLE"
PASTED = f"Alice pays with {CARD} and keeps the cloud key {KEY} in her notes."
QUEUE = reverse("memory:review_sensitive")

AGENT = r"""
import sys
sys.path.insert(0, sys.argv[2])
from memory.engine import connect
memory = connect(sys.argv[1], caller="billing-agent")
memory_id = memory.add_memory(sys.argv[3], user_id="alice", agent_id="atlas")
memory.search("cloud key", user_id="alice")  # the agent read it back: the activity log holds the text
print(memory_id)
memory.close()
"""


def agent_writes(store_url: str, text: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", AGENT, store_url, str(ROOT), text],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
    )


@pytest.fixture
def pasted(memory_store_url, agent_memory) -> str:
    """The memory an agent process wrote with a card number and a cloud key in it."""
    written = agent_writes(memory_store_url, PASTED)
    assert written.returncode == 0, written.stderr
    return written.stdout.strip()


def test_an_agents_card_and_key_show_masked_in_the_queue(viewer_client, pasted) -> None:
    page = viewer_client.get(QUEUE)
    html = page.content.decode()
    assert page.status_code == 200
    assert "4111 •••• •••• 1111" in html and "AKIA••••••••MPLE" in html
    assert CARD not in html and KEY not in html
    assert "payment card number" in html and "AWS access key" in html
    assert "user <code>alice</code>" in html and "agent <code>atlas</code>" in html
    assert "review/sensitive/" in html and "/redact/" not in html  # a viewer reads the queue, a curator decides


def test_redact_removes_both_from_the_record_its_history_and_its_activity(curator_client, pasted) -> None:
    memory = services.get_agent_memory()
    curator_client.post(
        reverse("memory:memory_edit", args=[pasted]),
        {"content": PASTED + " Edited.", "version": memory.get_memory(pasted).version},
    )
    for _ in range(2):  # a redaction changes the record's text, whose findings are made again (new ids)
        finding = memory.list_findings()[0]
        answer = curator_client.post(reverse("memory:review_redact", args=[finding.id]), {"next": QUEUE})
        assert answer.status_code == 302, answer.content.decode()
    content = memory.get_memory(pasted).content
    assert content.startswith("Alice pays with [REDACTED:card] and keeps the cloud key [REDACTED:aws_key]")
    history = json.dumps([[entry.before, entry.after, entry.summary] for entry in CurationEntry.objects.all()])
    assert CARD not in history and KEY not in history and "[REDACTED:card]" in history
    events = [memory.get_activity(event.id) for event in memory.list_activity(limit=None)]
    assert events and not any(CARD in repr(event) or KEY in repr(event) for event in events)
    assert memory.count_findings() == 0
    assert "Nothing sensitive found" in curator_client.get(QUEUE).content.decode()
    store = Path(services.get_agent_memory().store.path)
    for path in [store, *store.parent.glob(store.name + "-wal")]:
        assert KEY.encode() not in path.read_bytes()


def test_not_sensitive_takes_the_value_off_the_queue_even_after_a_rescan(curator_client, pasted) -> None:
    memory = services.get_agent_memory()
    card = next(finding for finding in memory.list_findings() if finding.kind == "card")
    answer = curator_client.post(reverse("memory:review_not_sensitive", args=[card.id]), {"next": QUEUE})
    assert answer.status_code == 302
    assert SensitiveDismissal.objects.filter(record_id=pasted, kind="card").exists()
    memory.rescan_findings()
    html = curator_client.get(QUEUE).content.decode()
    assert 'text-break">AKIA••••••••MPLE' in html and 'text-break">4111' not in html
    assert memory.get_memory(pasted).content == PASTED  # nothing changed in the store


def test_a_finding_that_is_gone_answers_400_not_500(curator_client, pasted) -> None:
    for path in ("memory:review_redact", "memory:review_not_sensitive"):
        answer = curator_client.post(reverse(path, args=[999999]))
        assert answer.status_code == 400
    assert curator_client.get(reverse("memory:review_redact", args=[1])).status_code == 405


def test_refuse_fails_the_agents_write_the_dashboards_and_the_apis_with_nothing_stored(
    settings, memory_store_url, curator_client
) -> None:
    refused = agent_writes(memory_store_url, PASTED, OAM_SENSITIVE_POLICY="refuse")
    assert refused.returncode != 0 and "ValueError" in refused.stderr and "payment card number" in refused.stderr
    settings.OAM_SENSITIVE_POLICY = "refuse"
    services.reset_agent_memory()
    form = curator_client.post(
        reverse("memory:memory_create"), {"content": PASTED, "memory_type": "fact", "status": "valid"}
    )
    assert form.status_code == 400
    assert "payment card number" in form.content.decode()
    api = curator_client.post(
        reverse("api:memories"), {"content": PASTED, "memory_type": "fact"}, content_type="application/json"
    )
    assert api.status_code == 400, api.content
    assert "card" in json.dumps(api.json())
    assert services.get_agent_memory().count_memories() == 0


def test_oam_check_sensitive_scans_what_was_stored_before(agent_memory, capsys) -> None:
    agent_memory.store.sensitive_policy = None  # stored before detection
    for i in range(5):
        agent_memory.add_memory(f"note {i}" + (f" with {KEY}" if i % 2 else ""), user_id="alice")
    agent_memory.store.sensitive_policy = agent_memory.store.sensitive_policy or "flag"
    assert agent_memory.count_findings() == 0
    call_command("oam_check", "--sensitive", "--batch-size", "2")
    out = capsys.readouterr()
    assert "scanned 5 records: 2 findings of secrets or personal data" in out.out
    assert "scan" in out.err  # the progress bar
    assert agent_memory.count_findings() == 2


def test_the_api_lists_redacts_and_dismisses_as_the_queue_does(client, curator, viewer, pasted) -> None:
    client.force_login(viewer)
    listing = client.get(reverse("api:findings"), {"user_id": "alice"})
    assert listing.status_code == 200
    found = {item["kind"]: item for item in listing.json()["results"]}
    assert set(found) == {"card", "aws_key"} and found["card"]["preview"] == "4111 •••• •••• 1111"
    assert CARD not in listing.content.decode() and KEY not in listing.content.decode()
    assert client.post(reverse("api:finding_dismiss", args=[found["card"]["id"]])).status_code == 403
    assert client.get(reverse("api:findings"), {"kind": "nope"}).status_code == 400
    assert client.get(reverse("api:findings"), {"cursor": "%%%"}).status_code == 400
    client.force_login(curator)
    assert client.post(reverse("api:finding_dismiss", args=[found["card"]["id"]])).status_code == 204
    assert [item["kind"] for item in client.get(reverse("api:findings")).json()["results"]] == ["aws_key"]
    assert client.post(reverse("api:finding_redact", args=[found["aws_key"]["id"]])).status_code == 204
    assert client.get(reverse("api:findings")).json()["results"] == []
    assert KEY not in services.get_agent_memory().get_memory(pasted).content
    assert client.post(reverse("api:finding_redact", args=[found["aws_key"]["id"]])).status_code == 404


def test_the_queue_shows_a_long_records_text_around_the_finding(viewer_client, agent_memory) -> None:
    agent_memory.add_memory("Lorem ipsum dolor sit amet. " * 40 + f"The key is {KEY}. " + "Tail words. " * 40)
    html = viewer_client.get(QUEUE).content.decode()
    assert "sit amet. The key is AKIA••••••••MPLE. Tail words." in html
    assert html.count("Lorem ipsum") <= 3 and "…</a>" in html


def test_redact_reaches_the_kept_import_upload_that_brought_the_record(curator_client, curator, tmp_path) -> None:
    """A record restored from an uploaded export: the upload is kept (OAM_IMPORT_DIR), so Redact
    takes the value out of the record's line there too, as an erasure does, and leaves the other
    records' lines (another record holding the same value is not this finding's) as they were."""
    from memory.curation import Actor
    from memory.models import ImportJob

    memory = services.get_agent_memory()
    theirs = {"id": "m-pasted", "record_type": "fact", "user_id": "alice", "content": PASTED}
    other = {"id": "m-other", "record_type": "fact", "user_id": "bob", "content": f"Bob also saw {KEY}."}
    lines = [{"format": "oam-export", "version": 1}, {"record": theirs}, {"record": other}]
    upload = tmp_path / "upload.jsonl"
    upload.write_text("".join(json.dumps(line) + "\n" for line in lines))
    memory.add_memory(PASTED, memory_type="fact", memory_id="m-pasted", user_id="alice")  # as the import did
    ImportJob.objects.create(**Actor(curator).authorship(), file_name=upload.name, path=str(upload), size=1)
    finding = next(f for f in memory.list_findings(record_id="m-pasted") if f.kind == "aws_key")
    answer = curator_client.post(reverse("memory:review_redact", args=[finding.id]), {"next": QUEUE})
    assert answer.status_code == 302, answer.content.decode()
    kept = {json.loads(line).get("record", {}).get("id"): line for line in upload.read_text().splitlines()}
    assert KEY not in kept["m-pasted"] and "[REDACTED:aws_key]" in kept["m-pasted"] and CARD in kept["m-pasted"]
    assert KEY in kept["m-other"]
