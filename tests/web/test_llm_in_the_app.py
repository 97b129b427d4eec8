"""The app's LLM: OAM_LLM_* settings, and `manage.py extract_memories` against a local fake server."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memory import services
from memory.engine import MemoryExtractionConfig, OpenAICompatibleLlm

REPO = Path(__file__).resolve().parents[2]


def extract_everything(fake) -> None:
    """Every extraction request yields one preference per NEW message line."""

    def answer(request):
        new = fake.user_text(request).split("NEW MESSAGES:\n", 1)[1]
        lines = [line for line in new.splitlines() if line.startswith("[")]
        return {
            "memories": [
                {"content": f"Remembered: {line.split(': ', 1)[1]}", "memory_type": "preference", "source_messages": []}
                for line in lines
            ]
        }

    fake.answers["memory_extraction"] = answer


def test_without_llm_settings_the_app_has_no_llm(agent_memory):
    assert agent_memory.llm is None


def test_llm_settings_build_the_clients_llm(fake_llm):
    llm = services.get_agent_memory().llm

    assert isinstance(llm, OpenAICompatibleLlm)
    assert (llm.base_url, llm.model) == (fake_llm.url, "test-model")


def test_a_base_url_without_a_model_stops_the_app_at_startup():
    env = {**os.environ, "OAM_LLM_BASE_URL": "http://127.0.0.1:9/v1", "OAM_LLM_MODEL": ""}
    result = subprocess.run(
        [sys.executable, "-c", "import oam_site.settings"], cwd=REPO, env=env, capture_output=True, text=True
    )

    assert result.returncode != 0
    assert "OAM_LLM_MODEL" in result.stderr


def test_extract_memories_covers_the_messages_not_extracted_yet(fake_llm):
    extract_everything(fake_llm)
    agent_memory = services.get_agent_memory()
    thread = agent_memory.create_thread(
        thread_id="t1", user_id="alice", memory_extraction_config=MemoryExtractionConfig(extract_memories=False)
    )
    thread.add_messages([{"role": "user", "content": "I like tea."}, {"role": "user", "content": "I hate coffee."}])
    assert fake_llm.count("memory_extraction") == 0

    out = StringIO()
    call_command("extract_memories", "t1", stdout=out)

    assert out.getvalue().strip() == "t1: 2 new memories"
    contents = sorted(m.content for m in agent_memory.list_memories(user_id="alice"))
    assert contents == ["Remembered: I hate coffee.", "Remembered: I like tea."]
    assert agent_memory.get_thread("t1").store.get_thread("t1").summary  # refreshed too

    call_command("extract_memories", "t1", stdout=out)  # nothing new since
    assert out.getvalue().strip().endswith("t1: 0 new memories")
    assert fake_llm.count("memory_extraction") == 1

    call_command("extract_memories", "t1", "--all", "--no-summary", stdout=out)
    assert out.getvalue().strip().endswith("t1: 2 new memories")
    assert fake_llm.count("memory_extraction") == 2


def test_extract_memories_refuses_without_an_llm(agent_memory):
    agent_memory.create_thread(thread_id="t1", user_id="alice")

    with pytest.raises(CommandError, match="OAM_LLM_BASE_URL"):
        call_command("extract_memories", "t1")


def test_extract_memories_names_a_missing_thread(fake_llm):
    with pytest.raises(CommandError, match="no thread 'nope'"):
        call_command("extract_memories", "nope")


def test_extract_memories_retries_what_failed_and_reports_failures_without_the_key(fake_llm):
    extract_everything(fake_llm)
    fake_llm.fail("memory_extraction", "http500")
    agent_memory = services.get_agent_memory()
    thread = agent_memory.create_thread(thread_id="t1", user_id="alice")
    thread.add_messages([{"role": "user", "content": "hello"}])  # its inline extraction fails
    assert agent_memory.extraction_stats()["failed"] == 1

    with pytest.raises(CommandError, match="extraction of thread 't1' failed") as raised:
        call_command("extract_memories", "t1")
    assert "sk-test-secret" not in str(raised.value)
    assert services.get_agent_memory().get_thread("t1").get_messages()[0].content == "hello"

    fake_llm.fail("memory_extraction", None)
    out = StringIO()
    call_command("extract_memories", "t1", stdout=out)
    assert out.getvalue().strip() == "t1: 1 new memory"
    call_command("extract_memories", "t1", stdout=out)
    assert out.getvalue().strip().endswith("t1: 0 new memories")


@pytest.mark.django_db  # seed_demo writes the reviewers' changes in Django's history
def test_seed_demo_never_calls_the_llm(fake_llm):
    call_command("seed_demo", "--seed=7", "--end-date=2026-01-15", stdout=StringIO())

    assert fake_llm.requests == []


def test_describe_again_asks_the_llm_for_a_new_caption_and_records_it(fake_llm, curator_client):
    from django.urls import reverse

    from memory.models import CurationEntry
    from tests.web.world import png_bytes

    agent_memory = services.get_agent_memory()
    thread = agent_memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    image_id = thread.add_image(png_bytes(), description="an old caption")
    assert "Describe again" in curator_client.get(reverse("memory:image_detail", args=[image_id])).content.decode()

    curator_client.post(reverse("memory:image_describe", args=[image_id]))

    assert agent_memory.get_image(image_id).content == "a captioned image"
    entry = CurationEntry.objects.get()
    assert (entry.before["content"], entry.after["content"]) == ("an old caption", "a captioned image")


def test_the_card_page_asks_the_llm_for_a_summary_and_memories(fake_llm, curator_client):
    from django.urls import reverse

    from memory.models import CurationEntry

    extract_everything(fake_llm)
    fake_llm.answers["thread_summary"] = lambda request: {"summary": "Ana plans a trip.", "topics": ["travel"]}
    agent_memory = services.get_agent_memory()
    thread = agent_memory.create_thread(
        thread_id="t1",
        user_id="u1",
        agent_id="a1",
        # One message is not enough for a summary of its own: the curator's refresh makes it.
        memory_extraction_config=MemoryExtractionConfig(extract_memories=False, context_summary_update_frequency=2),
    )
    thread.add_messages([{"role": "user", "content": "I want to see Porto."}])
    assert agent_memory.get_thread_record("t1").summary is None
    card = reverse("memory:card_preview", args=["t1"])
    assert "Extract memories now" in curator_client.get(card).content.decode()

    curator_client.post(reverse("memory:summary_refresh", args=["t1"]))
    curator_client.post(reverse("memory:memories_extract", args=["t1"]))

    assert agent_memory.get_thread_record("t1").summary == "Ana plans a trip."
    assert [m.content for m in agent_memory.list_memories(thread_id="t1")] == ["Remembered: I want to see Porto."]
    summaries = {entry.summary for entry in CurationEntry.objects.all()}
    assert summaries == {"Refreshed the summary with the LLM", "Extracted a preference from the thread with the LLM"}
