"""`manage.py oam_reembed --embedder SPEC`: the store moves to another embedder, the operator is told
to set OAM_EMBEDDER, a failure leaves the store usable and a rerun resumes."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, ManagementUtility, call_command

from memory import services
from memory.engine import EmbedderMismatchError, HashingEmbedder
from memory.management.commands import oam_reembed as command

from .world import build_world

pytestmark = pytest.mark.django_db


def reembed(*args: str) -> str:
    output = io.StringIO()
    call_command("oam_reembed", *args, stdout=output)
    return output.getvalue()


def top_hit(query: str) -> str:
    return services.get_agent_memory().search(query, user_id="alice", max_results=1)[0].id


class FailingEmbedder(HashingEmbedder):
    """Embeds `batches` batches, then fails as a dead embedding server would."""

    def __init__(self, dim: int, batches: int) -> None:
        super().__init__(dim)
        self.batches, self.calls = batches, 0

    def embed(self, texts):
        self.calls += 1
        if self.calls > self.batches:
            raise RuntimeError("embedding server unreachable")
        return super().embed(texts)


def test_the_store_moves_to_a_new_dimension_and_the_operator_is_told_to_set_oam_embedder(
    agent_memory, settings, capsys
):
    build_world(agent_memory)
    before = top_hit("vegetarian")

    output = reembed("--embedder", "hashing:128", "--batch-size", "3")

    assert "from hashing-384 (384 dimensions) to hashing-128 (128 dimensions)" in output
    assert "Now set OAM_EMBEDDER=hashing:128 and restart" in output
    assert "re-embed" in capsys.readouterr().err  # the progress bar
    settings.OAM_EMBEDDER = "hashing:128"
    services.reset_agent_memory()
    assert top_hit("vegetarian") == before == "fact-vegetarian"
    assert services.get_agent_memory().check().ok


def test_the_dashboard_with_the_old_setting_is_refused_clearly(agent_memory, viewer_client):
    build_world(agent_memory)
    reembed("--embedder", "hashing:128", "--no-progress")
    services.reset_agent_memory()  # the dashboard restarted, OAM_EMBEDDER not changed

    with pytest.raises(EmbedderMismatchError, match="128-dimensional vectors but the embedder produces 384"):
        services.get_agent_memory()
    page = viewer_client.get("/memories/")
    api = viewer_client.get("/api/v1/memories/")

    assert page.status_code == 503
    assert "The memory store needs another embedder" in page.text
    assert "<code>hashing-128</code> (128 dimensions)" in page.text and "OAM_EMBEDDER=hashing" in page.text
    # The exact line to set: the spec form, not the store's name for the embedder.
    assert 'id="embedder-setting">OAM_EMBEDDER=hashing:128</pre>' in page.text
    detail = api.json()["detail"]
    assert api.status_code == 503 and "OAM_EMBEDDER gives hashing-384 (384)" in detail
    assert "must set OAM_EMBEDDER=hashing:128 and restart" in detail


def test_a_failure_leaves_the_store_usable_and_a_rerun_resumes(agent_memory, monkeypatch):
    build_world(agent_memory)
    before = top_hit("vegetarian")
    monkeypatch.setattr(command, "embedder_from_spec", lambda spec: FailingEmbedder(128, batches=2))

    with pytest.raises(CommandError, match="unreachable\nThe store is unchanged and still uses hashing-384"):
        reembed("--embedder", "hashing:128", "--batch-size", "2", "--no-progress")

    services.reset_agent_memory()
    assert top_hit("vegetarian") == before  # opens and searches with the old embedder
    monkeypatch.undo()
    output = reembed("--embedder", "hashing:128", "--batch-size", "2", "--no-progress")
    assert "4 by an earlier run" in output


def test_the_same_embedder_is_a_no_op(agent_memory):
    build_world(agent_memory)

    output = reembed("--embedder", "hashing:384", "--no-progress")

    assert output == "The store already uses hashing-384 (384 dimensions): nothing to do.\n"


def test_a_store_already_moved_is_a_no_op_that_repeats_the_setting_to_make(agent_memory, settings):
    build_world(agent_memory)
    reembed("--embedder", "hashing:128", "--no-progress")
    services.reset_agent_memory()  # a new process, OAM_EMBEDDER not set yet

    output = reembed("--embedder", "hashing:128", "--no-progress")

    assert output.startswith("The store already uses hashing-128 (128 dimensions): nothing to do.\n")
    assert "Now set OAM_EMBEDDER=hashing:128" in output


def test_a_store_opened_with_another_embedder_than_its_own_is_refused(agent_memory, settings):
    build_world(agent_memory)
    reembed("--embedder", "hashing:128", "--no-progress")
    settings.OAM_EMBEDDER = "hashing:64"
    services.reset_agent_memory()

    with pytest.raises(CommandError, match=r"made by hashing-128 .* OAM_EMBEDDER='hashing:64' gives hashing-64"):
        reembed("--embedder", "hashing:256", "--no-progress")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--embedder", "word2vec"], "--embedder: Invalid OAM_EMBEDDER value 'word2vec'"),
        (["--embedder", "hashing:4"], "--embedder: HashingEmbedder dim must be an integer >= 8"),
        (["--embedder", "hashing:128", "--batch-size", "0"], "--batch-size must be 1 or more"),
    ],
)
def test_bad_arguments_are_a_clear_error_and_change_nothing(agent_memory, args, message):
    build_world(agent_memory)

    with pytest.raises(CommandError, match=message):
        reembed(*args)

    assert agent_memory.vector_state().pending_embedder is None


def test_a_bad_spec_exits_non_zero(agent_memory, capsys):
    with pytest.raises(SystemExit) as exit_:
        ManagementUtility(["manage.py", "oam_reembed", "--embedder", "word2vec"]).execute()

    assert exit_.value.code == 1
    assert "Invalid OAM_EMBEDDER value" in capsys.readouterr().err
