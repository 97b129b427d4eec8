"""What every dashboard page needs: the reader's role, the navigation section and the theme."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from memory.web.access import can_curate, role_of
from memory.web.scopes import describe, scope_of

THEMES = ("auto", "light", "dark")
THEME_COOKIE = "oam_theme"

# Navigation: (section, label, url name); a view belongs to the section its module is named after.
NAVIGATION = (
    ("overview", "Overview", "memory:overview"),
    ("threads", "Threads", "memory:thread_list"),
    ("memories", "Memories", "memory:memory_list"),
    ("people", "Users", "memory:user_list"),
    ("agents", "Agents", "memory:agent_list"),
    ("search", "Search", "memory:search"),
    ("graph", "Graph", "memory:graph"),
    ("review", "Review", "memory:review"),
    ("history", "History", "memory:history"),
    ("activity", "Activity", "memory:activity"),
)


# Pages whose module is not a section of their own belong to the section they are reached from.
SECTION_OF_MODULE = {
    "messages": "threads",
    "images": "threads",
    "cards": "threads",
    "links": "memories",
    "bulk": "memories",
    "duplicates": "review",
    "maps": "people",
}


def theme_of(request: HttpRequest) -> str:
    theme = request.COOKIES.get(THEME_COOKIE, "auto")
    return theme if theme in THEMES else "auto"


def dashboard(request: HttpRequest) -> dict[str, Any]:
    match = request.resolver_match
    section = ""
    if match is not None and match.namespace == "memory":
        module = match.func.__module__.rsplit(".", 1)[-1]
        section = SECTION_OF_MODULE.get(module, module)
        if module == "people" and match.url_name.startswith("agent"):
            section = "agents"
    user = getattr(request, "user", None)
    return {
        "navigation": NAVIGATION,
        "nav_section": section,
        "role": role_of(user) if user is not None else None,
        "scope": describe(scope) if (scope := scope_of(user)) is not None else None,
        "can_curate": can_curate(user) if user is not None else False,
        "theme": theme_of(request),
        "themes": THEMES,
    }
