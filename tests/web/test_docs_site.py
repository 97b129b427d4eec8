"""The documentation site: it builds offline with no warning, the README stays a short front page, and the
architecture page names every module of memory/ (and no module that is gone)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.test_docs import DOCS, ROOT, page

MEMORY = ROOT / "memory"
README = (ROOT / "README.md").read_text()


def test_the_site_builds_with_no_warning_and_loads_nothing_from_the_network(tmp_path):
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert built.returncode == 0, built.stdout + built.stderr
    assert {path.stem for path in DOCS.glob("*.md")} <= {path.stem for path in site.glob("*.html")}
    assert not (site / "screenshots.py").exists()
    for html in site.glob("*.html"):
        # Links to other sites are fine; a stylesheet, script, font or image from one is not.
        loaded = re.findall(r"<(?:link|script|img)\b[^>]*\b(?:href|src)=\"(https?:)?//", html.read_text())
        assert not loaded, f"{html.name} loads something from the network"


def test_the_readme_is_short_and_its_links_and_pictures_exist():
    assert len(README.splitlines()) <= 150
    for command in ("make run", "make test", "make test-quick", "make docs"):
        assert command in README
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert any(target.startswith("docs/screenshots/") for target in targets)
    for target in targets:
        assert (ROOT / target).is_file(), f"README.md links to {target}, which does not exist"


def test_every_page_is_linked_from_the_readme():
    for path in DOCS.glob("*.md"):
        if path.name != "index.md":
            assert f"](docs/{path.name})" in README, f"README.md does not link to docs/{path.name}"


def memory_modules() -> list[str]:
    """Every module of memory/ as a path from memory/ ("views/threads.py"), and every package with a
    trailing slash ("views/"); an __init__.py stands for its package; migrations are left out."""
    names = []
    for path in sorted(MEMORY.rglob("*.py")):
        where = path.relative_to(MEMORY)
        if "migrations" in where.parts or "__pycache__" in where.parts:
            continue
        if path.name != "__init__.py":
            names.append(where.as_posix())
        elif where.parent != Path("."):
            names.append(f"{where.parent.as_posix()}/")
    return names


def modules_section() -> str:
    """The architecture page's list of modules: from its heading to the next heading of its level."""
    text = page("architecture.md")
    start = text.index("\n## The modules of memory/")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_the_module_list_is_read_from_the_tree():
    modules = memory_modules()

    assert "engine/" in modules
    assert "engine/client.py" in modules
    assert not any("migrations" in name or name.endswith("__init__.py") for name in modules)


@pytest.mark.parametrize("module", memory_modules())
def test_every_module_of_memory_is_on_the_architecture_page(module):
    assert f"`{module}`" in modules_section(), (
        f"memory/{module} is not named in docs/architecture.md's list of modules: add a row for it"
    )


def test_every_module_on_the_architecture_page_exists():
    named = re.findall(r"^\| `([\w/.]+)` \|", modules_section(), flags=re.MULTILINE)

    assert named
    gone = [name for name in named if not (MEMORY / name).exists()]
    assert not gone, f"docs/architecture.md names modules that memory/ no longer has: {gone}"


def paths_named(text: str) -> set[str]:
    """Paths of the repository a page names ("memory/engine/limits.py", "tests/engine/test_contract_*.py"),
    leaving out those with a placeholder ("docs/screenshots/<name>-light.png")."""
    found = re.findall(
        r"(?<![\w/.])((?:memory|tests|bench|deploy|oam_site|static|templates|docs)/[\w/.*<>-]*[\w*/])", text
    )
    return {path for path in found if "<" not in path}


@pytest.mark.parametrize("name", ["README.md", *(f"docs/{path.name}" for path in sorted(DOCS.glob("*.md")))])
def test_every_path_a_page_names_exists(name):
    gone = sorted(path for path in paths_named((ROOT / name).read_text()) if not list(ROOT.glob(path)))

    assert not gone, f"{name} names paths the repository does not have: {gone}"
