"""What the dashboard's views share: the curation service for the request's user, htmx-aware
rendering, and the pages for records that are gone or input the engine refuses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.http import reswap, retarget

from memory.curation import Actor, Curation
from memory.engine import StaleVersionError
from memory.services import get_agent_memory
from memory.text import quoted, short_id
from memory.web.engine_errors import field_errors
from memory.web.forms.records import VersionedForm


def curation(request: HttpRequest) -> Curation:
    return Curation(get_agent_memory(), Actor(request.user))


def render_page(
    request: HttpRequest, template: str, context: dict[str, Any], *, fragment: str | None = None, status: int = 200
) -> HttpResponse:
    """The page, or only its `fragment` (a template partial) for an htmx request that is not a
    boosted navigation: filters, pagers and inline edits swap part of the page, no full reload."""
    htmx = getattr(request, "htmx", None)
    if fragment and htmx and not htmx.boosted and not htmx.history_restore_request:
        template = f"{template}#{fragment}"
    return render(request, template, context, status=status)


def gone(request: HttpRequest, kind: str, object_id: str, *, thread_id: str | None = None) -> HttpResponse:
    """404 for a record that does not exist (or no longer does): the page links to its history,
    where a deleted record can be restored."""
    response = render(
        request, "errors/gone.html", {"kind": kind, "object_id": object_id, "thread_id": thread_id}, status=404
    )
    if getattr(request, "htmx", False):  # not into the fragment that asked: over the whole page's content
        response = reswap(retarget(response, "#main"), "outerHTML")
        response["HX-Reselect"] = "#main"
    return response


def refuse(form: forms.Form, error: ValueError) -> None:
    """Put the engine's message on the form field it names, or on the form as a whole."""
    field, message = field_errors(error, form.fields)
    form.add_error(field, message)


def safe_next(request: HttpRequest, fallback: str) -> str:
    """The `next` URL of a form if it is on this site, else `fallback`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return target
    return fallback


def submit(
    request: HttpRequest,
    form: forms.Form,
    change: Callable[[dict[str, Any]], object],
    *,
    template: str,
    context: dict[str, Any],
    current: Callable[[], Any],
    name: str,
    gone_as: tuple[str, str],
    fragment: str | None = None,
) -> tuple[HttpResponse | None, object]:
    """Make the change a valid form asks for: (None, what `change` returned) when it is made (the
    caller says so and redirects), else (the answer, None): the form with the errors of the form
    or the engine (400), the record's current values when it changed since the form was opened
    (409; `current()` reads it into the context as `name`), or the 404 of a record gone
    meanwhile (`gone_as`: its kind and id)."""
    if form.is_valid():
        try:
            return None, change(form.cleaned_data)
        except StaleVersionError:
            record = current()
            if record is not None:
                return stale(request, template, {**context, name: record}, record.version, fragment), None
            return gone(request, *gone_as, thread_id=context.get("thread_id")), None
        except KeyError:
            return gone(request, *gone_as, thread_id=context.get("thread_id")), None
        except ValueError as error:
            refuse(form, error)
    return render_page(request, template, context, fragment=fragment, status=400), None


def saved(request: HttpRequest, result: object, what: str) -> None:
    """Tell the person what a form did: saved, or nothing to save."""
    messages.success(request, f"Saved {what}." if result is not None else f"Nothing changed in {what}.")


def stale(
    request: HttpRequest, template: str, context: dict[str, Any], current_version: int, fragment: str | None = None
) -> HttpResponse:
    """409: the record changed since the form was opened. The form keeps what was typed, the page
    shows the current values beside it, and the form now carries the current version: saving
    again is a deliberate overwrite of what the person has seen, never a lost update."""
    form = context["form"]
    form.data = form.data.copy()
    form.data["version"] = str(current_version)
    form.add_error(None, "This changed since you opened it. The current values are shown; check them and save again.")
    return render_page(request, template, {**context, "stale": True}, fragment=fragment, status=409)


STALE_DELETE = "This changed since you opened it. It is shown as it is now; confirm again to delete it."
NO_VERSION = (
    "This confirmation did not say which version of it you saw (a page opened before an update of the "
    "dashboard?). It is shown as it is now; confirm again to delete it."
)


@dataclass(frozen=True)
class Confirmed:
    """What a delete confirmation's POST came to: made (`status` 200, `result` what the delete
    returned), or refused with nothing deleted: 409 (changed since the page showed it), 400 (no
    version posted) or 404 (gone). A refusal other than 404 shows the confirmation again, with the
    record as it is now and its current version, and `refusal` saying why."""

    status: int = 200
    result: object = None
    refusal: str = ""


def confirm_delete(request: HttpRequest, delete: Callable[[int], object]) -> Confirmed:
    """Make the delete a confirmation page asks for, at the version the page showed (its hidden
    `version` field, as in the edit forms): the engine compares it inside the delete, so what is
    deleted is what the person saw. A post without a valid version deletes nothing, as an edit
    form's does."""
    form = VersionedForm(request.POST)
    if not form.is_valid():
        return Confirmed(400, refusal=NO_VERSION)
    try:
        return Confirmed(result=delete(form.cleaned_data["version"]))
    except StaleVersionError:
        return Confirmed(409, refusal=STALE_DELETE)
    except KeyError:
        return Confirmed(404)


def memory_words(memory_id: str) -> str:
    """A memory as a message names it: its text, quoted and shortened (its short id when it is no
    memory, or no longer one)."""
    try:
        return quoted(get_agent_memory().get_memory(memory_id).content)
    except KeyError:
        return f"{short_id(memory_id)} (no memory now)"
