"""Keep README.md honest: its example runs, and every setting, command and make target is documented."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)


def test_the_python_example_runs():
    [example] = python_blocks(README)
    output = io.StringIO()

    with contextlib.redirect_stdout(output):
        exec(compile(example, "README.md", "exec"), {})

    assert "fact: Alice is vegetarian." in output.getvalue()


def oam_settings_in_code() -> set[str]:
    sources = [*ROOT.glob("oam_site/*.py"), *ROOT.glob("memory/**/*.py")]
    return {name for path in sources for name in re.findall(r"\bOAM_[A-Z_]+\b", path.read_text())}


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
