"""The vendored libraries load from the site's own static files, fonts included."""

from __future__ import annotations

import json
from pathlib import Path

LOCK = json.loads((Path(__file__).resolve().parents[2] / "package-lock.json").read_text())


def version(package: str) -> str:
    return LOCK["packages"][f"node_modules/{package}"]["version"]


def test_bootstrap_htmx_and_the_icon_font_load_from_static_vendor(page):
    page.goto("/accounts/login/")
    page.add_style_tag(url="/static/vendor/bootstrap/css/bootstrap.min.css")
    page.add_style_tag(url="/static/vendor/bootstrap-icons/bootstrap-icons.min.css")
    page.add_script_tag(url="/static/vendor/bootstrap/js/bootstrap.bundle.min.js")
    page.add_script_tag(url="/static/vendor/htmx.org/htmx.min.js")
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<i class=\"bi bi-house\"></i>')")
    page.evaluate("document.fonts.ready")

    assert page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--bs-blue')") == "#0d6efd"
    assert page.evaluate("bootstrap.Tooltip.VERSION") == version("bootstrap")
    assert page.evaluate("htmx.version") == version("htmx.org")
    assert page.evaluate("document.fonts.check('1em bootstrap-icons')")
    assert page.evaluate("[...document.fonts].some(f => f.family === 'bootstrap-icons' && f.status === 'loaded')")
