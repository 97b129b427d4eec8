"""Keep the documentation honest: its examples run, and every setting, command and make target is documented.

The documentation is the site under docs/ (mkdocs.yml); README.md is its short front page.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.engine.helpers import fake_memory_llm

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """The Markdown of one page of the site, e.g. page("api.md")."""
    return (DOCS / name).read_text()


def pages() -> dict[str, str]:
    """Every page of the site and the README, by path from the repository's root."""
    paths = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    return {path.relative_to(ROOT).as_posix(): path.read_text() for path in paths}


EVERYTHING = "\n".join(pages().values())


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)


def run_example(example: str, where: str = "docs") -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(example, where, "exec"), {})
    return output.getvalue()


def test_every_python_example_is_run_by_a_test():
    """The examples the tests below, tests/api/test_docs_example.py and tests/api/test_mcp.py (docs/mcp.md's
    Python agent, against a live site) run are all there are."""
    blocks = [(name, block) for name, text in pages().items() for block in python_blocks(text)]

    assert [name for name, _ in blocks] == [
        "docs/activity.md",
        "docs/activity.md",
        "docs/api.md",
        "docs/engine.md",
        "docs/engine.md",
        "docs/mcp.md",
    ]


def test_the_python_example_runs():
    blocks = python_blocks(page("engine.md"))
    [example] = [block for block in blocks if block.startswith("from memory.engine import connect")]

    assert "fact: Alice is vegetarian." in run_example(example, "docs/engine.md")


def test_the_activity_example_records_the_search_under_its_caller(tmp_path):
    [example] = [block for block in python_blocks(page("activity.md")) if "connect(" in block]
    path = tmp_path / "memory.sqlite3"
    output = run_example(example.replace("/srv/oam/memory.sqlite3", str(path)), "docs/activity.md")

    assert output.startswith("support-bot allergies [(1, ")


def test_the_llm_example_runs_against_an_openai_compatible_server():
    [example] = [block for block in python_blocks(page("engine.md")) if "OpenAICompatibleLlm(" in block]
    with fake_memory_llm() as fake:
        fake.answers["thread_summary"] = lambda request: {"summary": "Alice likes sourdough.", "topics": ["pizza"]}
        output = run_example(example.replace("http://localhost:11434/v1", fake.url), "docs/engine.md")

        assert fake.count("memory_extraction") == 1
    assert "<summary>Alice likes sourdough.</summary>" in output
    assert "<topic>pizza</topic>" in output


def oam_settings_in_code() -> set[str]:
    """OAM_* names defined in the settings, or read from the environment or settings elsewhere."""
    names = {name for path in ROOT.glob("oam_site/*.py") for name in re.findall(r"\bOAM_[A-Z_]+\b", path.read_text())}
    read = r"(?:environ(?:\.get)?\(\s*|environ\[|settings\.)\"?(OAM_[A-Z_]+)"
    return names | {name for path in ROOT.glob("memory/**/*.py") for name in re.findall(read, path.read_text())}


@pytest.mark.parametrize("name", sorted(oam_settings_in_code()))
def test_every_setting_is_in_the_configuration_table(name):
    assert f"| `{name}` |" in page("configuration.md")


def management_commands() -> list[str]:
    return sorted(path.stem for path in ROOT.glob("memory/**/management/commands/[!_]*.py"))


def test_the_management_commands_are_found():
    assert {"seed_demo", "oam_export", "oam_import"} <= set(management_commands())


@pytest.mark.parametrize("command", management_commands())
def test_every_management_command_is_documented(command):
    assert f"manage.py {command}" in EVERYTHING


def make_targets() -> list[str]:
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    return [target for target in phony.group(1).split() if target != "help"]


@pytest.mark.parametrize("target", make_targets())
def test_every_make_target_is_documented(target):
    assert f"`make {target}`" in page("development.md")
