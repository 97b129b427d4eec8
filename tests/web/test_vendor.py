"""static/vendor/ holds exactly what `make vendor` copies, of the versions package-lock.json pins."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "static" / "vendor"
LOCK = json.loads((ROOT / "package-lock.json").read_text())
PINNED = LOCK["packages"][""]["dependencies"]


def vendor_files() -> list[str]:
    """The targets of the Makefile's VENDOR_FILES list, relative to static/vendor/."""
    block = re.search(r"^VENDOR_FILES := \\\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    return re.findall(r"=(\S+)", block.group(1))


def test_static_vendor_holds_exactly_the_listed_files():
    present = {path.relative_to(VENDOR).as_posix() for path in VENDOR.rglob("*") if path.is_file()}

    assert present == set(vendor_files())


@pytest.mark.parametrize("package", sorted(PINNED))
def test_each_package_is_pinned_exactly_and_vendored_with_its_license(package):
    version = LOCK["packages"][f"node_modules/{package}"]["version"]
    served = [
        VENDOR / name for name in vendor_files() if name.startswith(f"{package}/") and name.endswith((".css", ".js"))
    ]

    assert PINNED[package] == version
    assert (VENDOR / package / "LICENSE").is_file()
    assert served
    assert all(version in path.read_text() for path in served)
