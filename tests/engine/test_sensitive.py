"""Secrets and personal data: the detectors (engine/sensitive.py), the write policy and the
findings the store keeps (stores/sql/findings.py), from this process and from an agent's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory.engine import AgentMemory, HashingEmbedder, SensitivePolicy, SQLiteMemoryStore, connect, mask, scan

from .properties import ROOT

CARD, KEY = "4111 1111 1111 1111", "AKIAIOSFODNN7EXAMPLE"
PASTED = f"Pay with {CARD}; the cloud key is {KEY}."


def kinds(text: str) -> list[tuple[str, str]]:
    return [(found.kind, text[found.start : found.end]) for found in scan(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PASTED, [("card", CARD), ("aws_key", KEY)]),
        ("token ghp_" + "A1b2" * 9, [("github_token", "ghp_" + "A1b2" * 9)]),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", [("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")]),
        ("db_password=S3cr3t!x and more", [("password", "S3cr3t!x")]),
        ('api_key = "abc 123 xyz"', [("password", "abc 123 xyz")]),
        ("write to jane.doe@example.com.", [("email", "jane.doe@example.com")]),
        ("call +44 20 7946 0958 tonight", [("phone", "+44 20 7946 0958")]),
        ("IBAN DE89 3704 0044 0532 0130 00 is mine", [("iban", "DE89 3704 0044 0532 0130 00")]),
        ("the token zXb7Qp2LmN9vR4tY8wK3jH6gF1dS5aE0 works", [("high_entropy", "zXb7Qp2LmN9vR4tY8wK3jH6gF1dS5aE0")]),
        ("my api token: 8f9a7c6b5d4e3f2a1b0c9d8e7f6a5b4c", [("high_entropy", "8f9a7c6b5d4e3f2a1b0c9d8e7f6a5b4c")]),
    ],
)
def test_each_detector_finds_its_kind_and_span(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


def test_a_private_key_block_is_found_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
    assert kinds(f"here:\n{block}\nthanks") == [("private_key", block)]


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tea over coffee and have lived in Lisbon since 2019.",
        "The meeting is on 2024-03-14 at 10:30; the budget is 1,250,000 euros.",
        "The secret: we love tea. Key: value. password = correct horse",
        "order 4111 1111 1111 1112 (not a valid card), id 550e8400-e29b-41d4-a716-446655440000",
        "see https://example.com/docs/very/long/path/to/somewhere_else_v2 and [REDACTED:card]",
        "fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, digest e3b0c44298fc1c149afbf4c8996fb924",
    ],
)
def test_ordinary_text_has_no_findings(text: str) -> None:
    assert scan(text) == []


def test_previews_hide_the_middle() -> None:
    assert mask(CARD, "card") == "4111 •••• •••• 1111"
    assert mask(KEY, "aws_key") == "AKIA••••••••MPLE"
    assert mask("jane.doe@example.com", "email") == "j•••@example.com"


def test_a_preview_never_shows_the_whole_value() -> None:
    """A one-letter mailbox would come back whole ("a•••@b.io" is a@b.io), and a private key
    pasted on one line would show its first 30 characters of key material after the header."""
    assert mask("a@b.io", "email") == "•••@b.io"
    one_line = "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
    assert mask(one_line, "private_key") == "-----BEGIN RSA PRIVATE KEY----- •••"
    assert mask("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "private_key") == (
        "-----BEGIN OPENSSH PRIVATE KEY----- •••"
    )


def test_a_flagged_write_is_stored_with_its_findings_which_go_with_the_record() -> None:
    memory = connect("sqlite://:memory:", sensitive_policy="flag")
    memory_id = memory.add_memory(PASTED, user_id="alice", agent_id="atlas")
    findings = memory.list_findings()
    assert sorted(f.kind for f in findings) == ["aws_key", "card"]
    assert {f.record_id for f in findings} == {memory_id}
    assert findings[0].masked_text == "Pay with 4111 •••• •••• 1111; the cloud key is AKIA••••••••MPLE."
    assert memory.count_findings(user_id="alice") == 2 and memory.count_findings(user_id="bob") == 0
    assert memory.count_findings(kinds=["card"]) == 1
    card = next(f for f in findings if f.kind == "card")
    assert memory.count_findings(exclude=[f"{memory_id} {card.digest}"]) == 1
    memory.update_memory(memory_id, content=f"only the key {KEY} now")
    assert [f.kind for f in memory.list_findings()] == ["aws_key"]
    memory.delete_memory(memory_id)
    assert memory.count_findings() == 0


def test_messages_images_and_profiles_are_screened_too() -> None:
    memory = connect("sqlite://:memory:", sensitive_policy="flag")
    thread = memory.create_thread(user_id="alice", agent_id="atlas")
    thread.add_messages([{"role": "user", "content": f"my card is {CARD}"}])
    memory.add_user("alice", "Alice, reachable at alice@example.com")
    assert sorted(f.record_type for f in memory.list_findings()) == ["message", "user_profile"]
    memory.delete_thread(thread.thread_id)
    assert [f.kind for f in memory.list_findings()] == ["email"]


def test_the_redact_policy_stores_the_text_with_the_spans_replaced() -> None:
    memory = connect("sqlite://:memory:", sensitive_policy=SensitivePolicy.REDACT)
    memory_id = memory.add_memory(PASTED, user_id="alice")
    assert memory.get_memory(memory_id).content == "Pay with [REDACTED:card]; the cloud key is [REDACTED:aws_key]."
    memory.update_memory(memory_id, content=f"again {KEY}")
    assert memory.get_memory(memory_id).content == "again [REDACTED:aws_key]"
    thread = memory.create_thread(user_id="alice")
    thread.add_messages([{"role": "user", "content": [{"type": "text", "text": f"card {CARD}"}]}])
    [message] = memory.list_thread_messages(thread.thread_id)
    assert CARD not in message.content and CARD not in str(message.parts)
    assert memory.count_findings() == 0


def test_the_refuse_policy_fails_the_write_naming_the_kind_and_stores_nothing(monkeypatch) -> None:
    monkeypatch.setenv("OAM_SENSITIVE_POLICY", "refuse")
    memory = connect("sqlite://:memory:")
    with pytest.raises(ValueError, match=r"payment card number \(card\).*AWS access key|aws_key"):
        memory.add_memory(PASTED, user_id="alice")
    assert memory.count_memories() == 0
    safe = memory.add_memory("tea, not coffee", user_id="alice")
    with pytest.raises(ValueError, match="card"):
        memory.update_memory(safe, content=CARD)
    assert memory.get_memory(safe).content == "tea, not coffee"
    with pytest.raises(ValueError, match="email"):
        memory.add_user("alice", "mail me at alice@example.com")


def test_a_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="sensitive_policy must be one of flag, redact, refuse"):
        connect("sqlite://:memory:", sensitive_policy="loud")


def test_a_rescan_finds_what_was_stored_before_detection(tmp_path) -> None:
    store = SQLiteMemoryStore(str(tmp_path / "s.db"), embedder=HashingEmbedder(32), schema_policy="create_if_necessary")
    store.sensitive_policy = None  # a store written before findings existed
    memory = AgentMemory(store)
    for i in range(7):
        memory.add_memory(f"note {i}" + (f" card {CARD}" if i % 3 == 0 else ""), user_id="alice")
    assert memory.count_findings() == 0 and memory.count_texts() == 7
    after, read, found = 0, 0, 0
    while True:
        after, batch_read, batch_found = memory.rescan_findings(after, batch=2)
        read, found = read + batch_read, found + batch_found
        if not after:
            break
    assert (read, found) == (7, 3) and memory.count_findings() == 3
    memory.rescan_findings()  # again: the same findings, not twice as many
    assert memory.count_findings() == 3
    memory.close()


def test_redact_activity_replaces_a_value_in_every_event_holding_it() -> None:
    memory = connect("sqlite://:memory:")
    memory.add_memory(PASTED, user_id="alice")
    memory.search(KEY, user_id="alice")
    memory.activity.flush()
    assert memory.redact_activity(KEY, "[REDACTED:aws_key]") >= 1
    for event in memory.list_activity(limit=None):
        assert KEY not in repr(memory.get_activity(event.id))


AGENT = r"""
import sys
sys.path.insert(0, sys.argv[2])
from memory.engine import connect
memory = connect("sqlite:///" + sys.argv[1].lstrip("/"), caller="agent-x")
print(memory.add_memory(sys.argv[3], user_id="alice", agent_id="atlas"))
memory.close()
"""


def test_an_agent_processes_findings_reach_another_process_and_its_policy_applies(tmp_path) -> None:
    path = str(tmp_path / "store.sqlite3")
    connect(f"sqlite:///{path}").close()
    written = subprocess.run(
        [sys.executable, "-c", AGENT, path, str(ROOT), PASTED], capture_output=True, text=True, check=True
    )
    memory_id = written.stdout.strip()
    memory = connect(f"sqlite:///{path}")
    assert {(f.kind, f.record_id) for f in memory.list_findings()} == {("card", memory_id), ("aws_key", memory_id)}
    refused = subprocess.run(
        [sys.executable, "-c", AGENT, path, str(ROOT), PASTED],
        capture_output=True,
        text=True,
        env={"OAM_SENSITIVE_POLICY": "refuse", "PATH": "/usr/bin:/bin"},
    )
    assert refused.returncode != 0 and "ValueError" in refused.stderr and "card" in refused.stderr
    assert memory.count_memories() == 1
    memory.close()


def png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "teal").save(buffer, format="PNG")
    return buffer.getvalue()


def test_an_images_description_is_screened_on_add_and_on_edit() -> None:
    memory = connect("sqlite://:memory:", sensitive_policy="flag")
    image_id = memory.add_image(png(), description=f"a photo of the card {CARD}", user_id="alice")
    assert [(f.kind, f.record_type) for f in memory.list_findings()] == [("card", "image")]
    memory.update_image(image_id, description="a teal square")
    assert memory.count_findings() == 0


def test_erasing_a_person_takes_their_findings_along() -> None:
    memory = connect("sqlite://:memory:")
    memory.add_memory(PASTED, user_id="alice")
    memory.add_memory(f"bob's key {KEY}", user_id="bob")
    memory.erase_user("alice", scrub=False)
    assert [f.user_id for f in memory.list_findings()] == ["bob"]


def test_a_restricted_view_lists_and_counts_only_the_findings_of_its_scope() -> None:
    from memory.engine import Visibility

    memory = connect("sqlite://:memory:")
    memory.add_memory(PASTED, user_id="alice")
    bobs = memory.add_memory(f"bob's key {KEY}", user_id="bob")
    view = memory.restricted(Visibility(users=["bob"]))
    assert [f.record_id for f in view.list_findings()] == [bobs] and view.count_findings() == 1
    alices = next(f for f in memory.list_findings() if f.user_id == "alice")
    with pytest.raises(KeyError):
        view.get_finding(alices.id)


def test_a_version_7_store_gains_the_findings_table_in_place(tmp_path) -> None:
    import sqlite3

    from memory.engine import SchemaError, SchemaPolicy

    path = str(tmp_path / "old.sqlite3")
    SQLiteMemoryStore(path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY).close()
    with sqlite3.connect(path) as raw:
        raw.execute('DROP TABLE "OAM_FINDINGS"')
        raw.execute("UPDATE \"OAM_META\" SET meta_value = '7' WHERE meta_key = 'schema_version'")
    with pytest.raises(SchemaError, match="version 7"):
        SQLiteMemoryStore(path, schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    memory = connect(f"sqlite:///{path}")
    assert memory.health().schema_version == 8
    memory.add_memory(PASTED, user_id="alice")
    assert memory.count_findings() == 2
    memory.close()


def test_records_written_back_by_a_restore_or_an_import_have_their_findings() -> None:
    source = connect("sqlite://:memory:")
    source.add_memory(PASTED, user_id="alice")
    snapshot = source.snapshot()
    target = connect("sqlite://:memory:", sensitive_policy="refuse")
    target.restore(snapshot)  # written back as it was: found, not refused
    assert sorted(f.kind for f in target.list_findings()) == ["aws_key", "card"]
