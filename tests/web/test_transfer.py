"""Export and import in the dashboard (/settings/transfer/): the download is oam_export's file,
an upload is imported by a job whose page shows its progress, and bad files import nothing. Per
persona: curators only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from memory import services
from memory.curation import Actor, Curation, import_jobs
from memory.engine import transfer
from memory.models import BulkChange, ImportJob, ImportStatus
from memory.queries import export
from memory.web.forms.transfer import EXPORT_HEADER_BYTES, ImportForm
from tests.engine.helpers import export_line, padded_export, write_long_line_export

from .world import build_world

TRANSFER = reverse("memory:transfer")
EXPORT = reverse("memory:transfer_export")
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def imports(settings, tmp_path) -> Path:
    """Uploads kept in this test's folder, imported in the request (a thread would not see the
    test's database transaction; tests/browser/test_import.py runs the real background thread)."""
    settings.OAM_IMPORT_DIR = tmp_path / "imports"
    settings.OAM_IMPORT_INLINE = True
    settings.OAM_IMPORT_BATCH_SIZE = 5
    return settings.OAM_IMPORT_DIR


def oam_export(*args: str) -> str:
    out = StringIO()
    call_command("oam_export", *args, "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


def downloaded(response) -> str:
    assert response.status_code == 200, response.content[:500]
    return b"".join(response.streaming_content).decode("utf-8")


def use_fresh_store(settings, tmp_path, name: str = "fresh.sqlite3") -> None:
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / name}"
    services.reset_agent_memory()


@pytest.fixture
def world_export(agent_memory, settings, tmp_path) -> str:
    """The small world's export; the test then runs over a fresh, empty store."""
    build_world(agent_memory)
    text = oam_export()
    use_fresh_store(settings, tmp_path)
    return text


def upload(client, text: str | bytes, name: str = "store.jsonl"):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return client.post(TRANSFER, {"file": SimpleUploadedFile(name, data, content_type="application/jsonl")})


# --- who may ---------------------------------------------------------------------------------------


def test_viewers_may_neither_download_nor_upload(viewer_client, agent_memory):
    build_world(agent_memory)

    assert viewer_client.get(TRANSFER).status_code == 403
    assert viewer_client.get(EXPORT).status_code == 403
    response = upload(viewer_client, oam_export())
    assert response.status_code == 403
    assert not ImportJob.objects.exists()


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(EXPORT)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_curators_see_the_page_linked_from_the_overview_and_the_settings(curator_client, viewer):
    for page in ("memory:overview", "memory:tokens"):
        assert f'href="{TRANSFER}"' in curator_client.get(reverse(page)).content.decode()
    page = curator_client.get(TRANSFER).content.decode()
    assert "Download the export" in page and "Upload and import" in page
    assert "No imports yet." in page

    curator_client.force_login(viewer)
    for page in ("memory:overview", "memory:tokens"):
        assert TRANSFER not in curator_client.get(reverse(page)).content.decode()


# --- download --------------------------------------------------------------------------------------


def test_the_download_is_the_commands_export_of_the_whole_store(curator_client, agent_memory):
    build_world(agent_memory)

    response = curator_client.get(EXPORT)

    assert downloaded(response) == oam_export()
    assert response["Content-Type"].startswith("application/jsonl")
    assert response["Content-Disposition"].startswith('attachment; filename="oam-export-store-')
    assert response["Content-Disposition"].endswith('.jsonl"')


@pytest.mark.parametrize(
    ("field", "value", "label"),
    [
        ("user_id", "alice", "user-alice"),
        ("agent_id", "atlas", "agent-atlas"),
        ("thread_id", "trip-42", "thread-trip-42"),
    ],
)
def test_a_scoped_download_is_the_commands_export_of_that_scope(curator_client, agent_memory, field, value, label):
    build_world(agent_memory)

    response = curator_client.get(EXPORT, {field: value})

    text = downloaded(response)
    assert text == oam_export(f"--{field.replace('_', '-')}", value)
    assert json.loads(text.split("\n", 1)[0])["scope"] == {field: value}
    assert f'filename="oam-export-{label}-' in response["Content-Disposition"]


def test_an_id_unsafe_in_a_file_name_is_made_safe():
    assert export.export_file_name({"user_id": 'a/"b" c'}, date(2026, 1, 2)) == (
        "oam-export-user-a-b-c-2026-01-02.jsonl"
    )


def test_two_scopes_or_an_unknown_one_are_form_errors(curator_client, agent_memory):
    build_world(agent_memory)

    both = curator_client.get(EXPORT, {"user_id": "alice", "thread_id": "trip-42"})
    assert both.status_code == 400
    assert "Give at most one of user id, agent id and thread id" in both.content.decode()

    unknown = curator_client.get(EXPORT, {"user_id": "nobody"})
    assert unknown.status_code == 400
    assert "Nothing in the store belongs to &#x27;nobody&#x27;" in unknown.content.decode()


# --- upload ----------------------------------------------------------------------------------------


def test_an_upload_is_imported_and_its_job_reaches_done_with_the_counts(curator_client, curator, world_export):
    header = json.loads(world_export.split("\n", 1)[0])
    counts = header["counts"]

    response = upload(curator_client, world_export)

    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("memory:import_job", args=[job.pk])
    assert job.status == ImportStatus.DONE
    assert (job.done, job.total, job.percent) == (sum(counts.values()),) * 2 + (100,)
    assert job.restored == counts
    assert job.skipped == [] and job.error == ""
    assert (job.actor, job.file_name, job.size) == (curator, "store.jsonl", len(world_export.encode()))
    assert oam_export() == world_export  # the store now holds exactly the file
    assert not Path(job.path).exists()  # the upload is not kept once imported

    page = curator_client.get(response["Location"]).content.decode()
    assert "Done: imported 1 thread, " in page and "nothing was skipped" in page
    assert f'value="{job.total}"' in page and "100%" in page
    assert "hx-trigger" not in page and 'http-equiv="refresh"' not in page  # finished: no more polling
    assert "Importing store.jsonl" not in page  # the banner of a running import is gone, not a stale flash


def test_the_import_is_one_bulk_change_that_undoes_it_in_one_step(curator_client, curator, world_export, agent_memory):
    upload(curator_client, world_export)
    job = ImportJob.objects.get()

    change = BulkChange.objects.get()
    assert job.change == change
    assert change.summary.startswith("Imported store.jsonl: 1 thread, ")
    kinds = sorted(change.entries.values_list("object_kind", flat=True))
    # the thread stands for its messages, images and memories; profiles are their own
    assert kinds == ["agent", "thread", "user"]

    Curation(services.get_agent_memory(), Actor(curator)).revert_bulk(change)

    stats = services.get_agent_memory().stats()
    assert (stats.threads, stats.messages, stats.memories, stats.users, stats.agents) == (0, 0, 0, 0, 0)


def test_importing_the_same_file_again_skips_everything_and_says_why(curator_client, world_export):
    upload(curator_client, world_export)
    upload(curator_client, world_export, name="again.jsonl")

    job = ImportJob.objects.get(file_name="again.jsonl")
    assert job.status == ImportStatus.DONE
    assert job.restored == {"threads": 0, "records": 0, "relations": 0}
    assert job.skipped_count == job.total
    assert {item["reason"] for item in job.skipped} == {
        "already in the store (imported before, or an earlier run of this import)"
    }
    page = curator_client.get(reverse("memory:import_job", args=[job.pk])).content.decode()
    assert "already in the store" in page


def test_an_import_of_what_the_store_holds_says_nothing_was_imported_and_records_nothing(curator_client, world_export):
    """An export of a store imported into the same store: every line is read and skipped (issue 29)."""
    upload(curator_client, world_export)
    first = BulkChange.objects.get()

    upload(curator_client, world_export, name="again.jsonl")

    job = ImportJob.objects.get(file_name="again.jsonl")
    lines = job.total
    assert job.status == ImportStatus.DONE and job.done == lines and job.change is None
    assert list(BulkChange.objects.all()) == [first]  # nothing changed: nothing in the history
    page = curator_client.get(reverse("memory:import_job", args=[job.pk])).content.decode()
    assert f"{lines} lines read: 0 imported, {lines} skipped." in page
    assert f"Done: imported nothing; skipped {lines} (below)." in page
    assert "The store did not change, so the history records nothing." in page
    assert "lines imported" not in page and "one bulk change" not in page
    history = curator_client.get(reverse("memory:history")).content.decode()
    assert "again.jsonl" not in history


def test_an_import_that_skips_some_lines_counts_both(curator_client, world_export):
    upload(curator_client, world_export)
    services.get_agent_memory().delete_thread("trip-42")  # its messages, memories, images and link

    upload(curator_client, world_export, name="again.jsonl")

    job = ImportJob.objects.get(file_name="again.jsonl")
    imported, skipped = job.imported_count, job.skipped_count
    assert imported and skipped == 2 and imported + skipped == job.done == job.total  # the two profiles stayed
    assert job.change is not None and job.change.summary.endswith("(2 already there, skipped)")
    page = curator_client.get(reverse("memory:import_job", args=[job.pk])).content.decode()
    assert f"{job.total} lines read: {imported} imported, 2 skipped." in page
    assert "records it as one bulk change" in page


def test_a_file_of_another_version_is_a_form_error_and_nothing_is_imported(curator_client, world_export):
    header, rest = world_export.split("\n", 1)
    other = json.dumps({**json.loads(header), "version": 2}) + "\n" + rest

    response = upload(curator_client, other, name="future.jsonl")

    assert response.status_code == 400
    html = response.content.decode()
    assert (
        "future.jsonl: line 1: the file is oam-export version 2; this version of the engine reads version 1 only"
        in html
    )
    assert not ImportJob.objects.exists()
    assert services.get_agent_memory().stats().threads == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n not json", "photo.png: line 1: not UTF-8 text"),
        (b'{"name": "a list"}\n', "photo.png: line 1: this is not an oam-export file"),
        (b"", "The submitted file is empty."),
    ],
)
def test_a_file_that_is_no_export_is_a_form_error(curator_client, content, message):
    response = upload(curator_client, content, name="photo.png")

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not ImportJob.objects.exists()


def test_a_damaged_file_fails_its_job_with_the_line_and_imports_nothing(curator_client, world_export):
    lines = world_export.split("\n")
    lines[-3] = lines[-3][:40]  # a record or link cut short, near the end: after several batches' worth

    upload(curator_client, "\n".join(lines), name="damaged.jsonl")

    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert f"damaged.jsonl: line {len(lines) - 2}: not a JSON object" in job.error
    assert "Nothing was imported." in job.error
    stats = services.get_agent_memory().stats()
    assert (stats.threads, stats.messages, stats.memories) == (0, 0, 0)
    page = curator_client.get(reverse("memory:import_job", args=[job.pk])).content.decode()
    assert "Failed." in page and "Run the import again" not in page  # the same file would fail again
    assert "Importing damaged.jsonl" not in page


def nothing_imported() -> bool:
    stats = services.get_agent_memory().stats()
    return (stats.threads, stats.messages, stats.memories, stats.users, stats.agents) == (0, 0, 0, 0, 0)


def test_a_bad_line_past_the_first_batch_fails_the_job_naming_it_and_imports_nothing(
    curator_client, world_export, settings
):
    """Issue 25, item 3: line 1,052 of 1,100 holds a 600-byte id. The job fails on its first pass
    naming that line, nothing is imported; uploaded again, it fails the same way."""
    settings.OAM_IMPORT_BATCH_SIZE = 1000
    lines = padded_export(world_export, 1100)
    lines[1051] = export_line({"record": dict(json.loads(lines[1051])["record"], id="x" * 600)})

    for name in ("long-id.jsonl", "long-id-again.jsonl"):
        upload(curator_client, "".join(lines), name=name)

        job = ImportJob.objects.get(file_name=name)
        assert job.status == ImportStatus.FAILED
        assert job.error == (
            f"{name}: line 1052: record.id is 600 bytes in UTF-8; the limit is 512. Nothing was imported."
        )
        assert nothing_imported()


@pytest.mark.parametrize(
    ("object_id", "change", "message"),
    [
        ("map-1", {"bytes": "bm90IGFuIGltYWdl"}, "record.bytes: image is not a readable image (PNG, JPEG or WebP)"),
        ("fact-old", {"thread_id": "no-such-thread"}, "record.thread_id names no thread: 'no-such-thread'"),
    ],
)
def test_a_line_the_upload_or_the_api_would_refuse_fails_the_job_with_nothing_imported(
    curator_client, world_export, object_id, change, message
):
    """Issue 25, item 4 and the thread rule: an image that is not one (which /images/<id>/ could
    not show), a record in a thread that does not exist."""
    lines = world_export.splitlines(keepends=True)
    ids = [next(iter(json.loads(line).values()))["id"] for line in lines[1:]]
    number = ids.index(object_id) + 2
    lines[number - 1] = export_line({"record": {**json.loads(lines[number - 1])["record"], **change}})

    upload(curator_client, "".join(lines), name="bad.jsonl")

    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert job.error == f"bad.jsonl: line {number}: {message}. Nothing was imported."
    assert nothing_imported()


def test_a_line_over_the_limit_fails_the_job_with_nothing_imported(curator_client, tmp_path):
    """Issue 25, item 5: a line longer than any record is refused on the first pass, without being
    read whole."""
    path = tmp_path / "long.jsonl"
    write_long_line_export(path, transfer.MAX_LINE_BYTES + 1)

    with path.open("rb") as file:
        curator_client.post(TRANSFER, {"file": file})

    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert job.error.startswith("long.jsonl: line 2: the line is longer than 31,029,592 bytes")
    assert job.error.endswith("Nothing was imported.")
    assert nothing_imported()


def test_a_file_over_the_limit_is_a_form_error(curator_client, world_export, settings):
    settings.OAM_IMPORT_MAX_BYTES = 100

    response = upload(curator_client, world_export)

    assert response.status_code == 400
    assert "the dashboard takes files up to 100 bytes" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_no_file_is_a_form_error(curator_client):
    response = curator_client.post(TRANSFER, {})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


# --- a job's page while it runs, and after its process is gone --------------------------------------


def finished_process_id() -> int:
    """The id of a process that has ended (so no process has it, for a while)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def kept_job(curator, imports: Path, text: str, **fields) -> ImportJob:
    """An import job of Carl's whose upload (`text`) is kept in the imports folder."""
    imports.mkdir(parents=True, exist_ok=True)
    path = imports / "kept.jsonl"
    path.write_text(text, encoding="utf-8")
    return ImportJob.objects.create(
        actor=curator, actor_name="carl", file_name="store.jsonl", path=str(path), size=len(text), **fields
    )


def test_a_running_job_polls_every_second_and_refreshes_without_javascript(curator_client, curator, monkeypatch):
    job = ImportJob.objects.create(
        actor=curator, actor_name="carl", file_name="big.jsonl", path="", size=10, total=40, done=10
    )
    job.status, job.pid = ImportStatus.RUNNING, os.getpid()
    job.save()
    monkeypatch.setattr(import_jobs, "_running", {job.pk})
    url = reverse("memory:import_job", args=[job.pk])

    page = curator_client.get(url).content.decode()
    fragment = curator_client.get(url, headers={"HX-Request": "true"}).content.decode()

    assert 'hx-trigger="every 1s"' in page and '<meta http-equiv="refresh" content="2">' in page
    assert "10 of 40 lines read so far" in page and "25%" in page
    assert fragment.lstrip().startswith('<section id="import-progress"') and "<html" not in fragment
    assert 'hx-trigger="every 1s"' in fragment
    # While it runs, and only then, the panel says so (polling replaces it with the result).
    running = 'Importing <span class="oam-file-name">big.jsonl</span>: this panel follows it until it is done.'
    assert running in page and running in fragment


def test_a_job_whose_process_is_gone_is_interrupted_and_running_it_again_resumes(
    curator_client, curator, world_export, imports
):
    # One batch of 5 lines imported, then the server stopped: its process is gone, the job still "running".
    lines = world_export.splitlines(keepends=True)
    with pytest.raises(transfer.ExportFormatError, match="truncated"):
        transfer.import_export(services.get_agent_memory(), lines[:7], batch_size=5)
    job = kept_job(
        curator,
        imports,
        world_export,
        total=len(lines) - 1,
        done=5,
        status=ImportStatus.RUNNING,
        pid=finished_process_id(),
    )
    url = reverse("memory:import_job", args=[job.pk])

    page = curator_client.get(url).content.decode()

    assert "Interrupted:" in page and "Run the import again" in page
    job.refresh_from_db()
    assert job.status == ImportStatus.INTERRUPTED

    response = curator_client.post(reverse("memory:import_resume", args=[job.pk]))

    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == ImportStatus.DONE and job.done == len(lines) - 1
    assert job.skipped_count == 5  # the batch imported before the interruption
    page = curator_client.get(response["Location"]).content.decode()
    assert "Done: imported" in page and "Importing store.jsonl" not in page
    assert oam_export() == world_export


def test_viewers_cannot_see_or_resume_a_job(viewer_client, curator):
    job = ImportJob.objects.create(actor=curator, actor_name="carl", file_name="x.jsonl", path="", size=1)

    assert viewer_client.get(reverse("memory:import_job", args=[job.pk])).status_code == 403
    assert viewer_client.post(reverse("memory:import_resume", args=[job.pk])).status_code == 403


def test_the_page_lists_the_latest_imports(curator_client, world_export):
    upload(curator_client, world_export, name="<i>first.jsonl")

    page = curator_client.get(TRANSFER).content.decode()

    assert "&lt;i&gt;first.jsonl" in page and "<i>first" not in page
    assert ">done<" in page


def test_an_import_is_resumed_once_however_often_it_is_asked(curator, world_export, imports, monkeypatch):
    """Two requests to run a failed import again (a double click, two tabs): one runs it."""
    job = kept_job(curator, imports, world_export, total=len(world_export.splitlines()) - 1, status=ImportStatus.FAILED)
    launched = []
    monkeypatch.setattr(import_jobs, "launch", launched.append)
    stale_copy = ImportJob.objects.get(pk=job.pk)  # the second request read the job before the first ran it

    assert import_jobs.resume(job) is True
    monkeypatch.setattr(import_jobs, "refresh", lambda job: job)  # it does not read the job again
    assert import_jobs.resume(stale_copy) is False
    assert len(launched) == 1


def test_the_header_check_reads_no_more_than_a_header_can_be():
    """A file without line breaks (a minified JSON) is refused without being read whole."""
    sizes = []

    class Upload(SimpleUploadedFile):
        def readline(self, size=-1):
            sizes.append(size)
            return self.file.readline(size)

    upload = Upload("minified.json", b'{"one long line": "' + b"x" * 300_000 + b'"}')

    form = ImportForm(files={"file": upload}, max_bytes=10**9)

    assert not form.is_valid()
    assert sizes == [EXPORT_HEADER_BYTES]
