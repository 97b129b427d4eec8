"""The engine is framework-free: importing it, or any of its modules, must not pull in Django."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ENGINE_DIR = REPO_ROOT / "memory" / "engine"

IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
import memory.engine
names = ["memory.engine"]
for info in pkgutil.walk_packages(memory.engine.__path__, "memory.engine."):
    importlib.import_module(info.name)
    names.append(info.name)
django = sorted(name for name in sys.modules if name == "django" or name.startswith("django."))
print(json.dumps({"imported": names, "django": django}))
"""

DJANGO_IMPORT = re.compile(r"^\s*(import\s+django\b|from\s+django\b)", re.MULTILINE)


def test_importing_every_engine_module_loads_no_django_module():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "memory.engine.types" in report["imported"]
    assert len(report["imported"]) >= 5, report["imported"]
    assert report["django"] == [], f"engine import pulled in {report['django']}"


def test_no_engine_source_file_imports_django():
    files = sorted(ENGINE_DIR.rglob("*.py"))
    assert files, f"no engine sources under {ENGINE_DIR}"
    offenders = [str(path.relative_to(REPO_ROOT)) for path in files if DJANGO_IMPORT.search(path.read_text("utf-8"))]
    assert offenders == []
