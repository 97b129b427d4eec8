"""User content is always escaped: HTML and script in content, metadata keys and values, and ids
are rendered inert on every page that shows them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from tests.hostile.support import LiveMarkup

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
QUOTE = '"><svg onload=alert(3)>'
HOSTILE = (SCRIPT, IMG, QUOTE)


@pytest.fixture
def hostile(agent_memory, curator):
    hostile_id = f"id{QUOTE}"
    agent_memory.add_user(hostile_id, f"profile {SCRIPT}")
    thread = agent_memory.create_thread(
        thread_id=hostile_id, user_id=hostile_id, agent_id=f"agent{IMG}", metadata={SCRIPT: IMG, "k": QUOTE}
    )
    [message_id] = thread.add_messages(
        [{"role": f"user{IMG}", "content": f"hello {SCRIPT}", "metadata": {IMG: SCRIPT}}]
    )
    agent_memory.add_memory(
        f"memory {SCRIPT} {IMG}",
        memory_type="fact",
        memory_id=f"m{QUOTE}",
        user_id=hostile_id,
        thread_id=hostile_id,
        metadata={QUOTE: [SCRIPT], "nested": {IMG: QUOTE}},
        autonomous_linking=False,
    )
    curation = Curation(agent_memory, Actor(curator))
    memory = agent_memory.get_memory(f"m{QUOTE}")
    entry = curation.update_memory(memory.id, version=memory.version, content=f"edited {SCRIPT}")
    return {
        "thread": hostile_id,
        "message": message_id,
        "memory": f"m{QUOTE}",
        "user": hostile_id,
        "agent": f"agent{IMG}",
        "entry": entry.pk,
    }


def pages(ids) -> list[str]:
    return [
        reverse("memory:overview"),
        reverse("memory:thread_list"),
        reverse("memory:thread_list") + "?q=" + "%3Cscript%3E",
        reverse("memory:thread_detail", args=[ids["thread"]]),
        reverse("memory:thread_edit", args=[ids["thread"]]),
        reverse("memory:thread_delete", args=[ids["thread"]]),
        reverse("memory:message_detail", args=[ids["thread"], ids["message"]]),
        reverse("memory:message_edit", args=[ids["thread"], ids["message"]]),
        reverse("memory:memory_list"),
        reverse("memory:memory_list") + "?q=script&metadata_filter=%3Cscript%3E",
        reverse("memory:memory_detail", args=[ids["memory"]]),
        reverse("memory:memory_edit", args=[ids["memory"]]),
        reverse("memory:memory_delete", args=[ids["memory"]]),
        reverse("memory:user_list"),
        reverse("memory:user_detail", args=[ids["user"]]),
        reverse("memory:user_edit", args=[ids["user"]]),
        reverse("memory:agent_list"),
        reverse("memory:agent_detail", args=[ids["agent"]]),
        reverse("memory:history"),
        reverse("memory:history_entry", args=[ids["entry"]]),
        reverse("memory:history_revert", args=[ids["entry"]]),
        reverse("memory:memory_detail", args=[f"missing{SCRIPT}"]),
    ]


def test_hostile_content_is_rendered_inert_everywhere(curator_client, hostile):
    for url in pages(hostile):
        response = curator_client.get(url)
        assert response.status_code in (200, 400, 404), url
        html = response.content.decode()
        for payload in HOSTILE:
            assert payload not in html, (url, payload)
        parser = LiveMarkup()
        parser.feed(html)
        assert parser.found == [], url
