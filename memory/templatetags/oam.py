"""Template helpers for records: times, ids, metadata chips, status badges, links and highlights.

Everything that writes HTML escapes the user's content first (`escaped`, conditional_escape
without its per-call wrapper: a results page writes thousands of values).
"""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from django import forms, template
from django.forms.widgets import Input
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.safestring import SafeString, mark_safe

from memory.engine import MEMORY_TYPES, HashingEmbedder, query_stems, stems, words
from memory.services import embedder_spec, get_agent_memory
from memory.text import clip, plural, short_id
from memory.web.converters import path_to
from memory.web.forms.search import FORMAT_OPTIONS

register = template.Library()


@register.simple_tag(name="path")
def path_tag(name: str, *ids: str) -> str:
    """{% path 'memory:memory_detail' memory.id %}: the URL of a record page, as {% url %} gives it."""
    return path_to(name, *ids)


EXPIRING_SOON = timedelta(days=7)
NOTHING = mark_safe('<span class="text-body-secondary">—</span>')
"""What an empty value shows."""


def parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def relative(moment: datetime, now: datetime) -> str:
    """ "3 h ago", "in 2 days", or the date for anything more than a month away."""
    seconds = (now - moment).total_seconds()
    ahead, seconds = seconds < 0, abs(seconds)
    if seconds < 45:
        return "just now" if not ahead else "in a moment"
    for size, unit in ((60, "min"), (3600, "h"), (86400, "day")):
        if seconds < size * (60 if unit == "min" else 24 if unit == "h" else 31):
            count = max(1, round(seconds / size))
            label = f"{count} {unit}" + ("s" if unit == "day" and count != 1 else "")
            return f"in {label}" if ahead else f"{label} ago"
    return f"{moment:%-d %b %Y}"


@register.simple_tag
def when(value: Any, *, now: datetime | None = None) -> SafeString:
    """A time as "3 h ago", with the exact UTC time on hover and in the datetime attribute."""
    moment = parse_time(value)
    if moment is None:
        return NOTHING
    exact = moment.astimezone(UTC)
    return mark_safe(
        f'<time datetime="{exact.isoformat()}" title="{exact:%Y-%m-%d %H:%M:%S} UTC">'
        f"{relative(exact, now or datetime.now(UTC))}</time>"
    )


@register.filter
def utc(value: Any) -> str:
    """A time in full: 2026-11-20 14:05:09 UTC."""
    moment = parse_time(value)
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC" if moment else "—"


@register.filter
def as_json(value: Any, indent: int | None = None) -> str:
    """A value as JSON text (strings unquoted at the top level, as chips show them)."""
    if isinstance(value, str) and indent is None:
        return value
    return json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=False)


register.filter("short_id", short_id)  # {{ record.id|short_id }}


@register.simple_tag
def metadata_chips(metadata: Any, limit: int = 12, width: int = 60) -> SafeString:
    """Metadata as key/value chips: nested values as JSON, values past `width` characters cut
    (the full text is in the title); at most `limit` chips, then "+n more". Built as one string
    (every key and value escaped): listings show a few chips on each of their rows."""
    if not metadata:
        return NOTHING
    chips = []
    for key, value in list(metadata.items())[:limit]:
        text = as_json(value)
        key, shown, text = escaped(key), escaped(clip(text, width)), escaped(text)
        chips.append(
            f'<span class="oam-chip" title="{key}: {text}"><span class="oam-chip-key">{key}</span> {shown}</span>'
        )
    if len(metadata) > limit:
        chips.append(f'<span class="oam-chip text-body-secondary">+{len(metadata) - limit} more</span>')
    return mark_safe(f'<span class="oam-chips">{"".join(chips)}</span>')


register.filter("clip", clip)  # {{ text|clip:220 }}


def effective_state(record: Any, now: datetime | None = None) -> str:
    """valid, invalid, expired, or expiring (valid, within a week of its expiry)."""
    now = now or datetime.now(UTC)
    expires = parse_time(getattr(record, "expires_at", None))
    if expires is not None and expires <= now:
        return "expired"
    status = str(getattr(record, "status", "valid"))
    if status == "valid" and expires is not None and expires - now <= EXPIRING_SOON:
        return "expiring"
    return status


STATE_CLASSES = {
    "valid": "text-bg-success",
    "invalid": "text-bg-warning",
    "expired": "text-bg-secondary",
    "expiring": "text-bg-info",
}


STATE_TITLES = {
    "invalid": "Kept as history: flagged invalid, or superseded, refined or duplicated by another memory.",
    "expired": "Past its expiry: invisible to reads, deleted at the next purge.",
    "expiring": "Expires within a week.",
}


@register.simple_tag
def status_badge(record: Any) -> SafeString:
    state = effective_state(record)
    return mark_safe(
        f'<span class="badge rounded-pill {STATE_CLASSES[state]}" title="{STATE_TITLES.get(state, "")}">{state}</span>'
    )


@register.simple_tag
def record_url(record: Any) -> str:
    """The dashboard page of a record of any type."""
    record_type = getattr(record, "record_type", None)
    if record_type in MEMORY_TYPES:
        return path_to("memory:memory_detail", record.id)
    if record_type == "message":
        return path_to("memory:message_detail", record.thread_id, record.id)
    if record_type == "image":
        return path_to("memory:image_detail", record.id)
    if record_type == "thread":
        return path_to("memory:thread_detail", record.id)
    if record_type in ("user_profile", "agent_profile"):  # a profile's id is its owner's
        return path_to(f"memory:{record_type.removesuffix('_profile')}_detail", record.id)
    return ""


@register.simple_tag
def history_url(kind: str, object_id: str) -> str:
    return reverse("memory:history") + "?" + urlencode({"object_kind": kind, "object_id": object_id})


@register.filter(needs_autoescape=True)
def highlight(text: Any, query: Any, autoescape: bool = True) -> SafeString:
    """The text, escaped, with each case-insensitive occurrence of `query` in <mark>."""
    text = str(text or "")
    query = str(query or "").strip()
    write = escaped if autoescape else str
    if not query:
        return mark_safe(write(text))
    pieces = re.split(f"({re.escape(query)})", text, flags=re.IGNORECASE)
    return mark_safe(
        "".join(f"<mark>{write(piece)}</mark>" if i % 2 else write(piece) for i, piece in enumerate(pieces))
    )


register.filter("plural_of", plural)  # {{ n|plural_of:"memory" }}: "1 memory", "3 memories"


@register.filter
def widget(field: Any) -> SafeString:
    """A bound field's widget, marked invalid (Bootstrap's is-invalid, aria-invalid) when it has
    errors, and described by its error message."""
    if not field.errors:
        return render_widget(field, {})
    classes = field.field.widget.attrs.get("class", "")
    return render_widget(
        field,
        {
            "class": f"{classes} is-invalid".strip(),
            "aria-invalid": "true",
            "aria-describedby": f"{field.auto_id}_error",
        },
    )


def escaped(value: Any) -> str:
    """conditional_escape(value), as text: the same output (html.escape, safe strings as they are,
    lazy strings evaluated) without the lazy-aware wrapper around each call, which is half the
    cost of writing a form's fields when a form writes four hundred values."""
    if isinstance(value, Promise):
        value = str(value)
    return value.__html__() if hasattr(value, "__html__") else html.escape(str(value))


def errors_html(field: Any) -> str:
    """A field's errors in one element, which its widget's aria-describedby names."""
    if not field.errors:
        return ""
    return (
        f'<div class="invalid-feedback d-block" id="{escaped(field.auto_id)}_error">'
        f"{' '.join(escaped(error) for error in field.errors)}</div>"
    )


@register.simple_tag(name="field")
def field_group(field: Any) -> SafeString:
    """{% field form.x %}: one labelled form field with its widget, errors and help text, the
    errors and help tied to the widget (aria-describedby). A tag rather than an included template:
    the search form has twenty fields, and an include costs each one a twentieth of a millisecond."""
    help_text = (
        f'<div class="form-text" id="{escaped(field.auto_id)}_helptext">{escaped(field.help_text)}</div>'
        if field.help_text
        else ""
    )
    return mark_safe(
        f'<div class="mb-3"><label class="form-label fw-semibold small mb-1" for="{escaped(field.id_for_label)}">'
        f"{escaped(field.label)}</label>{widget(field)}{errors_html(field)}{help_text}</div>"
    )


@register.simple_tag(name="choices")
def choice_group(field: Any) -> SafeString:
    """{% choices form.x %}: a group of checkboxes (or radios) in a fieldset, with its legend,
    errors and help text; like {% field %}, without a template per choice."""
    boxes = "".join(
        f'<div class="form-check form-check-inline small">{choice_input(choice)}<label class="form-check-label" '
        f'for="{escaped(choice.id_for_label)}">{escaped(choice.choice_label)}</label></div>'
        for choice in field
    )
    described = f' aria-describedby="{escaped(field.auto_id)}_error"' if field.errors else ""
    help_text = f'<div class="form-text">{escaped(field.help_text)}</div>' if field.help_text else ""
    return mark_safe(
        f'<fieldset class="mb-3"{described}><legend class="form-label fw-semibold small mb-1">{escaped(field.label)}'
        f"</legend>{boxes}{errors_html(field)}{help_text}</fieldset>"
    )


def render_widget(field: Any, attrs: dict[str, Any]) -> SafeString:
    """As field.as_widget(attrs), from the same widget context (so the same attributes, values
    and escaping), but written here for inputs and selects: Django writes each widget through
    two small templates, a tenth of a millisecond apiece, which a form of thirty fields feels.
    Other widgets (files, text areas, choice groups) go through Django."""
    widget = field.field.widget
    if not isinstance(widget, (Input, forms.Select)) or isinstance(widget, forms.FileInput):
        return field.as_widget(attrs=attrs)
    attrs = field.build_widget_attrs(attrs, widget)
    if field.auto_id and "id" not in widget.attrs:
        attrs.setdefault("id", field.auto_id)
    context = widget.get_context(field.html_name, field.value(), attrs)["widget"]
    if isinstance(widget, Input):
        return input_html(context)
    options = "".join(
        f'<option value="{escaped(option["value"])}"{" selected" if option["selected"] else ""}>'
        f"{escaped(option['label'])}</option>"
        for _, group, _ in context["optgroups"]
        for option in group
    )
    return mark_safe(f'<select name="{escaped(context["name"])}"{html_attrs(context["attrs"])}>{options}</select>')


def input_html(context: dict[str, Any]) -> SafeString:
    """An <input> from a widget's (or a choice's) context, as django/forms/widgets/input.html writes it."""
    value = "" if context.get("value") is None else f' value="{escaped(context["value"])}"'
    return mark_safe(
        f'<input type="{escaped(context["type"])}" name="{escaped(context["name"])}"{value}'
        f"{html_attrs(context['attrs'])}>"
    )


def html_attrs(attrs: dict[str, Any]) -> str:
    """Attributes as django/forms/widgets/attrs.html writes them: True as a bare name, False left out."""
    return "".join(
        f" {escaped(name)}" if value is True else f' {escaped(name)}="{escaped(value)}"'
        for name, value in attrs.items()
        if value is not False and value is not None
    )


@register.filter
def choice_input(choice: Any) -> SafeString:
    """One checkbox or radio of a choice group ({{ choice.tag }}, without its two templates)."""
    return input_html(choice.data)


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    """{{ images|get_item:part.id }}: a dict lookup by a key held in a variable."""
    return mapping.get(key) if hasattr(mapping, "get") else None


RETIRED_AS = {"supersedes": "superseded by", "refines": "refined by", "duplicates": "a duplicate of"}


@register.filter
def retired_as(relation_type: str) -> str:
    """How a lifecycle link reads from the memory it retires: "superseded by"."""
    return RETIRED_AS.get(relation_type, relation_type)


@register.filter
def owner_url(owner_id: str, kind: str) -> str:
    """{{ id|owner_url:"user" }}: the page of a user or an agent."""
    return path_to(f"memory:{kind}_detail", owner_id)


register.filter("embedder_spec", embedder_spec)  # {{ stored_embedder|embedder_spec:stored_dim }}


@register.filter
def owner_edit_url(owner_id: str, kind: str) -> str:
    """{{ id|owner_edit_url:"user" }}: the form that edits (or writes) a user's or an agent's profile."""
    return path_to(f"memory:{kind}_edit", owner_id)


@register.filter
def hidden_field_errors(form: Any) -> list[str]:
    """The errors of a form's hidden fields, each prefixed with the field's label."""
    return [f"{field.label}: {error}" for field in form.hidden_fields() for error in field.errors]


TYPE_PLURALS = {"memory": "episodic memories", "fact": "facts", "guideline": "guidelines", "preference": "preferences"}


@register.filter
def type_plural(memory_type: str) -> str:
    """{{ "memory"|type_plural }}: "episodic memories" (the type "memory" names episodic ones)."""
    return TYPE_PLURALS.get(memory_type, memory_type + "s")


SCOPE_LINKS = (
    ("user_id", "memory:user_detail", "bi-person", "User"),
    ("agent_id", "memory:agent_detail", "bi-robot", "Agent"),
    ("thread_id", "memory:thread_detail", "bi-chat-left-text", "Thread"),
)


@register.simple_tag
def scope_links(record: Any) -> SafeString:
    """A record's user, agent and thread as short links, one a line ("unscoped" when it has none).
    One tag rather than a block per dimension: a listing shows it on every row."""
    if record.record_type in ("user_profile", "agent_profile"):
        kind = record.record_type.removesuffix("_profile")
        url = escaped(path_to(f"memory:{kind}_detail", record.id))
        return mark_safe(f'profile of {kind} <a href="{url}">{escaped(short_id(record.id))}</a>')
    lines = []
    for attribute, route, icon, label in SCOPE_LINKS:
        value = getattr(record, attribute, None)
        if value:
            lines.append(
                f'<div title="{label}: {escaped(value)}"><i class="bi {icon}" aria-hidden="true"></i>'
                f'<span class="visually-hidden">{label}</span> '
                f'<a href="{escaped(path_to(route, value))}">{escaped(short_id(value))}</a></div>'
            )
    return mark_safe("".join(lines) or '<span class="text-body-secondary">unscoped</span>')


@register.simple_tag
def relation_label(relation: Any, from_id: str) -> str:
    """A link's label as read from one of its ends ("supersedes", or "is_superseded_by")."""
    return relation.label_from(from_id)


# (key in result.scores, label, what it means (the label's tooltip, or none), value format)
SCORE_PARTS = (
    ("vector_rank", "vector", "", "#{}"),
    (
        "vector_distance",
        "vector distance",
        "The cosine distance between the query's vector and the record's: 0 same direction, 1 unrelated, "
        "2 opposite. Before any fusion: the same under every strategy.",
        "{:.4f}",
    ),
    ("keyword_rank", "keyword", "", "#{}"),
    ("keyword_score", "BM25", "The keyword ranking's score: higher matches the query's words better.", "{:.3f}"),
    ("score", "fused", "The hybrid score, 1/(10 + vector rank) + 2/(10 + keyword rank): higher is better.", "{:.4f}"),
)


@register.filter
def distance(value: float, places: int = 4) -> str:
    """A result's vector distance to `places` decimals, or "—" when it has none (NaN: a result
    only the keyword ranking found)."""
    return f"{value:.{places}f}" if value == value else "—"


@register.simple_tag
def score_parts(result: Any) -> SafeString:
    """Why a result ranked where it did: its rank and score in each ranking it appeared in, and
    the fused score of a hybrid search (what the engine puts in `result.scores`)."""
    scores = result.scores or {}
    parts = []
    for name, label, meaning, value in SCORE_PARTS:
        if scores.get(name) is None:
            continue
        shown = f'<abbr title="{escaped(meaning)}">{label}</abbr>' if meaning else label
        parts.append(f"{shown} {escaped(value.format(scores[name]))}")
    if not parts:
        return mark_safe("")
    return mark_safe(f'<span class="oam-scores text-body-secondary">{" · ".join(parts)}</span>')


WORD = re.compile(r"\w+")


@lru_cache(maxsize=256)
def searched_stems(query: str) -> frozenset[str]:
    """The stems a query searches for, once per query (a results page highlights ten texts)."""
    return frozenset(query_stems(query))


@register.filter(needs_autoescape=True)
def highlight_words(text: Any, query: Any, autoescape: bool = True) -> SafeString:
    """The text, escaped, with the words the keyword ranking matches for `query` in <mark>: the
    engine's own analysis (case and accents ignored, stems, function words dropped), so "hotels"
    marks "Hotel" and "in" marks nothing."""
    text = str(text or "")
    write = escaped if autoescape else str
    wanted = searched_stems(str(query or ""))
    if not wanted:
        return mark_safe(write(text))
    matches = list(WORD.finditer(text))
    if text.isascii():  # folding is lower-casing: no word to analyse alone
        folded = [match.group().lower() for match in matches]
    else:
        folded = [(words(match.group()) or [""])[0] for match in matches]
    pieces, last = [], 0
    for match, stem in zip(matches, stems(folded), strict=True):  # one stemmer call
        if stem in wanted:
            pieces += [write(text[last : match.start()]), f"<mark>{write(match.group())}</mark>"]
            last = match.end()
    pieces.append(write(text[last:]))
    return mark_safe("".join(pieces))


@register.simple_tag
def format_toggles(form: Any) -> SafeString:
    """The search form's SearchResultFormatConfig checkboxes, each as sent once the form was
    (the hidden `formatted` field says it was), else at the engine's default."""
    sent = form.is_bound and form.data.get("formatted")
    toggles = []
    for name, default in FORMAT_OPTIONS.items():
        field = form[name]
        checked = bool(field.value()) if sent else default
        box = render_widget(field, {"checked": True} if checked else {})
        toggles.append(
            f'<div class="form-check form-check-inline small">{box}<label class="form-check-label" '
            f'for="{escaped(field.id_for_label)}">{escaped(field.label)}</label></div>'
        )
    return mark_safe("".join(toggles))


@register.inclusion_tag("partials/lexical_embedder.html")
def lexical_embedder_notice(lead: str) -> dict[str, Any]:
    """Where search decides what is shown (the workbench, a card's relevant memories): a plain
    word when the store's embedder is the lexical hashing one, which goes by words, not meanings
    ("`lead` words, not meanings"), and how to configure one that does."""
    return {"lexical": isinstance(get_agent_memory().store.embedder, HashingEmbedder), "lead": lead}


@register.filter
def entry_content(entry: Any) -> str:
    """What the record a history entry changed says (after the change, or before a deletion), so
    that a row of the history names it by its words, not its id; empty for a link, or a record
    without text. A deletion's `before` is the snapshot of everything that went with it."""
    values = entry.after or entry.before or {}
    if "records" in values or "threads" in values:
        found = [
            item for item in values.get("records", []) + values.get("threads", []) if item.get("id") == entry.object_id
        ]
        values = found[0] if found else {}
    text = values.get("content") or (values.get("metadata") or {}).get("title") or values.get("summary") or ""
    return text if isinstance(text, str) else ""
