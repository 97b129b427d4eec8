"""Erasing a person: the staff page (/users/<id>/erase/), its receipt, `manage.py oam_erase`, the
history's tombstones (never reverted), and the kept import uploads rewritten without them.

The whole-dump check (store file, WAL, index folder, Django's database file, `sqlite3 .dump`)
over the demo runs in real processes: tests/crash/test_crash_erasure.py."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse

from memory.curation import Actor, Curation, CurationError
from memory.curation.erasure import erase, preview, replace_in_history
from memory.models import BulkChange, CurationEntry, ErasureReceipt, ImportJob

SECRET = "Alice's cat is called periwinkleosprey"


@pytest.fixture
def admin(db) -> User:
    return User.objects.create_user("ada", password="ada-password", is_staff=True)


@pytest.fixture
def admin_client(client, admin):
    client.force_login(admin)
    return client


@pytest.fixture
def people(agent_memory, curator):
    """alice (to be erased), with a memory a curator edited (so the history holds its text), and bob."""
    thread = agent_memory.create_thread(thread_id="ta", user_id="alice", agent_id="atlas")
    thread.add_messages([{"role": "user", "content": "my cat is called periwinkleosprey"}])
    memory_id = agent_memory.add_memory("Alice has a cat.", user_id="alice")
    bobs = agent_memory.add_memory("Bob keeps bees.", user_id="bob")
    service = Curation(agent_memory, Actor(curator))
    entry = service.update_memory(memory_id, version=1, content=SECRET)
    with service.bulk(f"Merged near-duplicates into {SECRET}") as change:
        service.update_memory(memory_id, version=2, metadata={"merged": True})
    return {"memory": memory_id, "bobs": bobs, "entry": entry, "bulk": change}


def test_the_page_says_first_that_it_cannot_be_undone_and_counts_what_goes(admin_client, people):
    response = admin_client.get(reverse("memory:user_erase", args=["alice"]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "This cannot be undone" in html
    assert html.index("This cannot be undone") < html.index("What will go")
    assert "Type the user id to confirm" in html and "Erase this user for good" in html
    for label in ("Memories", "Messages", "Threads", "Curation history entries"):
        assert label in html


def test_only_staff_may_erase(client, viewer, curator, people, agent_memory):
    url = reverse("memory:user_erase", args=["alice"])
    for user in (viewer, curator):
        client.force_login(user)
        assert client.get(url).status_code == 403
        assert client.post(url, {"confirm": "alice"}).status_code == 403
    assert agent_memory.get_memory(people["memory"]).content == SECRET


def test_a_wrong_confirmation_erases_nothing(admin_client, people, agent_memory):
    response = admin_client.post(reverse("memory:user_erase", args=["alice"]), {"confirm": "alic"})
    assert response.status_code == 400
    assert "That is not the user id" in response.content.decode()
    assert agent_memory.get_memory(people["memory"]).content == SECRET
    assert not ErasureReceipt.objects.exists()


def test_an_unknown_user_is_a_404(admin_client, db):
    assert admin_client.get(reverse("memory:user_erase", args=["nobody"])).status_code == 404


def test_erasing_leaves_a_receipt_without_content_and_tombstones_in_the_history(
    admin_client, admin, people, agent_memory
):
    response = admin_client.post(reverse("memory:user_erase", args=["alice"]), {"confirm": "alice"})
    receipt = ErasureReceipt.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("memory:erasure_receipt", args=[receipt.pk])
    with pytest.raises(KeyError):
        agent_memory.get_memory(people["memory"])
    assert agent_memory.get_memory(people["bobs"]).content == "Bob keeps bees."

    page = admin_client.get(response["Location"]).content.decode()
    assert "Download the receipt (JSON)" in page and receipt.digest in page
    download = admin_client.get(reverse("memory:erasure_receipt_json", args=[receipt.pk]))
    assert download["Content-Disposition"].startswith("attachment")
    data = json.loads(download.content)
    assert data["user_id"] == "alice" and data["erased_by"] == "ada" and data["status"] == "done"
    counts = data["counts"]
    assert counts["memories"] == 1 and counts["messages"] == 1 and counts["history_entries"] == 2  # an edit, a bulk
    assert len(data["digest_sha256"]) == 64
    assert "periwinkleosprey" not in download.content.decode() and "periwinkleosprey" not in page
    assert admin_client.get(reverse("memory:erasure_list")).status_code == 200

    entry = CurationEntry.objects.get(pk=people["entry"].pk)
    assert entry.erased and entry.before is None and entry.after is None
    assert "periwinkleosprey" not in BulkChange.objects.get(pk=people["bulk"].pk).summary
    assert (entry.object_kind, entry.action, entry.actor_name) == ("memory", "update", "carl")
    assert "periwinkleosprey" not in entry.summary


def test_the_not_sensitive_decisions_about_their_records_go(people, agent_memory, curator):
    from memory.models import SensitiveDismissal

    for record_id in (people["memory"], people["bobs"]):
        SensitiveDismissal.objects.create(
            **Actor(curator).authorship(), record_id=record_id, digest="0" * 64, kind="email", preview="a***@e***"
        )
    assert preview(agent_memory, "alice").counts["sensitive_dismissals"] == 1
    receipt = erase(agent_memory, Actor(None), "alice")
    assert receipt.counts["sensitive_dismissals"] == 1
    assert list(SensitiveDismissal.objects.values_list("record_id", flat=True)) == [people["bobs"]]


def test_a_tombstone_cannot_be_reverted(curator_client, curator, people, agent_memory):
    erase(agent_memory, Actor(None), "alice")
    entry = CurationEntry.objects.get(pk=people["entry"].pk)
    with pytest.raises(CurationError, match="erased with the person"):
        Curation(agent_memory, Actor(curator)).revert(entry)
    page = curator_client.get(reverse("memory:history_revert", args=[entry.pk])).content.decode()
    assert "Erased with the person" in page or "erased with the person" in page
    shown = curator_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()
    assert "Its content was erased" in shown and reverse("memory:history_revert", args=[entry.pk]) not in shown
    response = curator_client.post(reverse("memory:history_revert", args=[entry.pk]))
    assert response.status_code == 302
    with pytest.raises(KeyError):
        agent_memory.get_memory(people["memory"])


def test_a_rerun_finishes_an_interrupted_erasure(people, agent_memory, monkeypatch):
    from memory.curation import erasure

    def crash(*args, **kwargs):
        raise RuntimeError("killed")

    monkeypatch.setattr(erasure, "tombstone_history", crash)
    with pytest.raises(RuntimeError):
        erase(agent_memory, Actor(None), "alice")
    receipt = ErasureReceipt.objects.get()
    assert receipt.status == "started"
    monkeypatch.undo()
    plan = preview(agent_memory, "alice")
    assert plan.resuming == receipt and not plan.empty
    assert erase(agent_memory, Actor(None), "alice").pk == receipt.pk
    receipt.refresh_from_db()
    assert receipt.status == "done" and receipt.counts["memories"] == 1
    assert CurationEntry.objects.get(pk=people["entry"].pk).erased


def test_downloaded_exports_are_listed_as_out_of_reach(people, agent_memory, admin, tmp_path):
    call_command("oam_export", "--output", str(tmp_path / "all.jsonl"), "--no-progress", stdout=io.StringIO())
    call_command("oam_export", "--user-id", "bob", "--output", str(tmp_path / "bob.jsonl"), stdout=io.StringIO())
    [download] = preview(agent_memory, "alice").downloads  # the whole store's, not bob's
    assert download.scope == "the whole store" and download.call
    receipt = erase(agent_memory, Actor(admin), "alice")
    assert [item["scope"] for item in receipt.unreached] == ["the whole store"]
    assert receipt.as_json()["not_reached"]["downloaded_exports"][0]["at"] == download.at


def export_lines(*items: dict) -> str:
    header = {"counts": {}, "format": "oam-export", "scope": {}, "version": 1}
    return "\n".join(json.dumps(item, sort_keys=True, separators=(",", ":")) for item in (header, *items)) + "\n"


def test_kept_import_uploads_lose_their_lines(people, agent_memory, tmp_path, curator):
    mixed, only = tmp_path / "mixed.jsonl", tmp_path / "only.jsonl"
    alice = {"record": {"id": "m-a", "record_type": "fact", "user_id": "alice", "content": "periwinkleosprey"}}
    bob = {"record": {"id": "m-b", "record_type": "fact", "user_id": "bob", "content": "bees"}}
    link = {"relation": {"id": "l1", "source_record_id": "m-b", "target_record_id": "m-a"}}
    mixed.write_text(export_lines(alice, bob, link))
    only.write_text(export_lines({"thread": {"id": "ta2", "user_id": "alice"}}, alice))
    for path in (mixed, only):
        ImportJob.objects.create(**Actor(curator).authorship(), file_name=path.name, path=str(path), size=1)
    assert preview(agent_memory, "alice").counts["import_files"] == 2
    receipt = erase(agent_memory, Actor(None), "alice")
    assert "periwinkleosprey" not in mixed.read_text() and "bees" in mixed.read_text()
    assert json.loads(mixed.read_text().splitlines()[0])["counts"] == {"records": 1, "relations": 0, "threads": 0}
    assert not only.exists()
    assert sorted(upload["action"] for upload in receipt.imports) == ["deleted", "rewritten"]


def test_replace_in_history_removes_a_text_from_a_records_entries(people, agent_memory):
    assert replace_in_history([people["memory"]], "periwinkleosprey", "[REDACTED:pet]") == 2  # the edit, the bulk's
    assert "[REDACTED:pet]" in BulkChange.objects.get(pk=people["bulk"].pk).summary
    entry = CurationEntry.objects.get(pk=people["entry"].pk)
    assert "periwinkleosprey" not in json.dumps([entry.before, entry.after, entry.summary])
    assert "[REDACTED:pet]" in entry.after["content"]
    with pytest.raises(ValueError):
        replace_in_history([people["memory"]], "", "x")


# --- manage.py oam_erase ----------------------------------------------------------------------


def test_the_command_previews_with_dry_run(people, agent_memory):
    out = io.StringIO()
    call_command("oam_erase", "--user-id", "alice", "--dry-run", stdout=out)
    assert "Would erase user alice" in out.getvalue() and "memories" in out.getvalue()
    assert agent_memory.get_memory(people["memory"]).content == SECRET


def test_the_command_asks_for_the_id_again(people, agent_memory, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "bob")
    with pytest.raises(CommandError, match="did not match"):
        call_command("oam_erase", "--user-id", "alice", stdout=io.StringIO())
    assert agent_memory.get_memory(people["memory"]).content == SECRET
    monkeypatch.setattr("builtins.input", lambda prompt: "alice")
    out = io.StringIO()
    call_command("oam_erase", "--user-id", "alice", stdout=out)
    assert "Erased user alice" in out.getvalue()
    with pytest.raises(KeyError):
        agent_memory.get_memory(people["memory"])


def test_the_command_refuses_an_unknown_user(db):
    with pytest.raises(CommandError, match="no user"):
        call_command("oam_erase", "--user-id", "nobody", "--no-input", stdout=io.StringIO())


def test_the_saved_views_of_their_records_go(people, agent_memory, curator):
    """A saved view filtered to the person (its name and query typed about them: "alice's cat
    periwinkleosprey") is a copy of what they told, and lists nothing once they are gone."""
    from memory.models import SavedView

    theirs = SavedView.objects.create(
        user=curator, listing="memories", name="alice's cat", query="user_id=alice&q=periwinkleosprey"
    )
    kept = SavedView.objects.create(user=curator, listing="memories", name="bees", query="user_id=bob&q=bees")
    SavedView.objects.create(user=curator, listing="threads", name="her threads", query="q=x&user_id=alice")
    assert preview(agent_memory, "alice").counts["saved_views"] == 2
    receipt = erase(agent_memory, Actor(None), "alice")
    assert receipt.counts["saved_views"] == 2
    assert list(SavedView.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not SavedView.objects.filter(pk=theirs.pk).exists()
