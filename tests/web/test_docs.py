"""Keep README.md honest: its example runs, and every setting, command and make target is documented."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.engine.helpers import fake_memory_llm

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)


def run_example(example: str) -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(example, "README.md", "exec"), {})
    return output.getvalue()


def test_the_python_example_runs():
    [example] = [block for block in python_blocks(README) if block.startswith("from memory.engine import connect")]

    assert "fact: Alice is vegetarian." in run_example(example)


def test_the_llm_example_runs_against_an_openai_compatible_server():
    [example] = [block for block in python_blocks(README) if "OpenAICompatibleLlm(" in block]
    with fake_memory_llm() as fake:
        fake.answers["thread_summary"] = lambda request: {"summary": "Alice likes sourdough.", "topics": ["pizza"]}
        output = run_example(example.replace("http://localhost:11434/v1", fake.url))

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
    assert f"| `{name}` |" in README


@pytest.mark.parametrize("command", sorted(p.stem for p in ROOT.glob("memory/management/commands/[!_]*.py")))
def test_every_management_command_is_documented(command):
    assert f"manage.py {command}" in README


def make_targets() -> list[str]:
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    return [target for target in phony.group(1).split() if target != "help"]


@pytest.mark.parametrize("target", make_targets())
def test_every_make_target_is_documented(target):
    assert f"make {target}" in README
