"""The near-duplicate finder (/review/duplicates/): one user's groups of near-duplicate memories,
side by side with a word diff against each group's centre, resolved in one click per group.

GET is the state (`user_id`, `max_distance`, `memory_type`, and `merged`: a merge just made, shown
with its undo). A POST merges a group (`action=merge`: keep one, link the others as its
`duplicates` or delete them, Curation.merge_duplicates) or undoes a merge (`action=undo`,
Curation.revert_bulk); without JavaScript it redirects back to the same groups, with htmx it
swaps the resolved group's card in place (and the summary above the groups, out of band).
Deleting asks first (`confirmed=yes` on the confirmation's form), like every delete of the app.

The page also lists the other users who have groups at the same distance (the USERS_SCANNED
users with the most memories, counted in one engine read), so that none is overlooked.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from memory.curation import CurationError, undone_by
from memory.engine import DEFAULT_DUPLICATE_DISTANCE, MAX_DUPLICATE_DISTANCE
from memory.models import BulkChange
from memory.queries.duplicates import (
    GROUPS_SHOWN,
    USERS_CONSIDERED,
    USERS_SCANNED,
    default_user,
    group_view,
    users_with_groups,
)
from memory.services import get_agent_memory
from memory.text import plural
from memory.views.common import curation, refuse, render_page
from memory.web.access import viewer_required
from memory.web.fields import ID_MAX_LENGTH
from memory.web.filters import FILTER_ID_INPUT, FILTER_INPUT, memory_type_filter


class DuplicateFilters(forms.Form):
    """Whose memories, and how close counts as a near-duplicate (the engine's argument names)."""

    user_id = forms.CharField(
        label="User",
        max_length=ID_MAX_LENGTH,
        widget=forms.TextInput(attrs={**FILTER_ID_INPUT, "list": "duplicate-users", "data-shortcut": "search"}),
    )
    max_distance = forms.FloatField(
        label="Max distance",
        required=False,
        min_value=0,
        max_value=MAX_DUPLICATE_DISTANCE,
        widget=forms.NumberInput(attrs={**FILTER_INPUT, "step": "0.01"}),
        help_text=f"Cosine distance, 0 (identical) to {MAX_DUPLICATE_DISTANCE}; default {DEFAULT_DUPLICATE_DISTANCE}.",
    )
    memory_type = memory_type_filter()

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        distance = data.get("max_distance")
        return {
            "user_id": data["user_id"],
            "max_distance": DEFAULT_DUPLICATE_DISTANCE if distance is None else distance,
            "memory_types": data.get("memory_type") or None,
            "limit": GROUPS_SHOWN,
        }


class MergeForm(forms.Form):
    """One group resolved: the memory to `keep` among the group's `members`, and `how` the others
    are retired."""

    keep = forms.CharField(max_length=ID_MAX_LENGTH, error_messages={"required": "Choose the memory to keep."})
    members = forms.MultipleChoiceField(choices=())
    how = forms.ChoiceField(choices=[("link", "link as duplicates"), ("delete", "delete")])

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        # Any ids: the curation service checks that each names a memory.
        self.fields["members"].choices = [(value, value) for value in data.getlist("members")]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if "keep" in data and "members" in data and data["keep"] not in data["members"]:
            self.add_error("keep", "Choose the memory to keep among the group's memories.")
        return data


@viewer_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def review_duplicates(request: HttpRequest) -> HttpResponse:
    """The groups of the chosen user (GET), or a group merged or a merge undone (POST: curators
    only, as every POST of the dashboard, memory.web.access.ReadOnlyViewersMiddleware)."""
    if request.method == "POST":
        return resolve(request)
    return groups_page(request, request.GET, merged=merged_change(request.GET.get("merged")))


def groups_page(
    request: HttpRequest, query: Any, *, merged: BulkChange | None = None, refused: str = "", status: int = 200
) -> HttpResponse:
    """The page for a query (the GET parameters, or a POST's `state_` fields): the filters and
    the groups they find; `refused`, why a merge or an undo was not done (then a 400)."""
    query = query.copy()
    if not query.get("user_id"):
        query["user_id"] = default_user(get_agent_memory()) or ""
    if not query.get("max_distance"):
        query["max_distance"] = str(DEFAULT_DUPLICATE_DISTANCE)  # shown in its field, not implied
    context = summary_context(query)
    if context["form"].errors or refused:
        status = 400
    found = context["found"]
    context |= {
        "groups": [group_view(group) for group in found.groups] if found else [],
        "users": [profile.id for profile in get_agent_memory().list_users(limit=USERS_CONSIDERED)],
        "merged": merged,
        "merged_undone": merged is not None and undone_by(merged) is not None,
        "refused": refused,
        "state": [
            (name, value) for name in ("user_id", "max_distance", "memory_type") for value in query.getlist(name)
        ],
    }
    response = render_page(request, "review/duplicates.html", context, status=status)
    if refused and getattr(request, "htmx", False):  # over the whole page, not into the group's card
        response = reswap(retarget(response, "#main"), "outerHTML")
        response["HX-Reselect"] = "#main"
    return response


def summary_context(query: QueryDict) -> dict[str, Any]:
    """The filters of a query, the groups they find (`found`, None when the filters are wrong)
    and the users who have groups at the same distance (`other_users`, with a link each;
    `next_user`, the first of them other than this one)."""
    form = DuplicateFilters(query)
    found = None
    other_users: list[dict[str, Any]] = []
    if form.is_valid():
        arguments = form.engine_arguments()
        try:
            found = get_agent_memory().find_duplicates(**arguments)
        except ValueError as error:
            refuse(form, error)
        else:
            user_id = arguments["user_id"]
            if not get_agent_memory().owner_counts("user", [user_id])[user_id]["memories"]:
                form.add_error("user_id", f"No user {user_id!r} with memories: check the id.")
                found = None
            else:
                switch = query.copy()
                for other, groups in users_with_groups(get_agent_memory(), arguments):
                    switch["user_id"] = other
                    url = page_url(switch)
                    other_users.append({"user_id": other, "groups": groups, "url": url, "current": other == user_id})
    return {
        "form": form,
        "found": found,
        "other_users": other_users,
        "next_user": next((user for user in other_users if not user["current"]), None),
        "users_scanned": USERS_SCANNED,
    }


def merged_change(value: str | None) -> BulkChange | None:
    """The bulk change a `merged` (or `change`) parameter names, if it exists."""
    if not value or not value.isdigit():
        return None
    return BulkChange.objects.filter(pk=int(value)).first()


def resolve(request: HttpRequest) -> HttpResponse:
    """Merge a group, or undo a merge; then back to the same groups (a redirect), or, with htmx,
    the resolved group's card in place of the group. Refused: the page again, saying why (400)."""
    service = curation(request)
    state = QueryDict(mutable=True)
    for name in ("user_id", "max_distance", "memory_type"):
        state.setlist(name, request.POST.getlist(f"state_{name}"))
    if request.POST.get("action") == "undo":
        change = merged_change(request.POST.get("change"))
        if change is None:
            return groups_page(request, state, refused="Nothing was undone: change names no merge.")
        try:
            undo = service.revert_bulk(change)
        except CurationError as error:
            return groups_page(request, state, refused=f"Nothing was undone: {error}.")
        failed = f" ({plural(len(undo.failed), 'change')} could not be undone)" if undo.failed else ""
        messages.success(request, f"Undone: {change.summary}{failed}.")
        return redirect(page_url(state))
    form = MergeForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        retired = [member for member in data["members"] if member != data["keep"]]
        if data["how"] == "delete" and request.POST.get("confirmed") != "yes":
            return confirm_delete(request, state, data["keep"], retired)
        try:
            merge = service.merge_duplicates(data["keep"], retired, how=data["how"])
        except ValueError as error:
            refuse(form, error)
        else:
            if getattr(request, "htmx", False):
                context = {"merge": merge, "change": merge.change, "state": state_fields(state), "oob": True}
                return render_page(request, "review/duplicates_resolved.html", context | summary_context(state))
            messages.success(request, merge.change.summary + ".")
            return redirect(page_url(state, merged=merge.change.pk))
    reasons = " ".join(str(message) for errors in form.errors.values() for message in errors)
    return groups_page(request, state, refused=f"Nothing was merged: {reasons}")


def confirm_delete(request: HttpRequest, state: QueryDict, keep_id: str, retired_ids: list[str]) -> HttpResponse:
    """The question before a merge deletes memories: which one stays, which go (a page; with htmx,
    a card in place of the group)."""
    try:
        keep = get_agent_memory().get_memory(keep_id)
        retired = [get_agent_memory().get_memory(memory_id) for memory_id in retired_ids]
    except KeyError as error:
        return groups_page(request, state, refused=f"Nothing was merged: {error.args[0]}.")
    htmx = getattr(request, "htmx", None)
    context = {
        "keep": keep,
        "retired": retired,
        "state": state_fields(state),
        "cancel_url": page_url(state),
        "card_id": (htmx.target if htmx else None) or "delete-confirmation",
    }
    template = "review/duplicates_delete_card.html" if htmx else "review/duplicates_delete.html"
    return render_page(request, template, context)


def state_fields(state: QueryDict) -> list[tuple[str, str]]:
    return [(name, value) for name, values in state.lists() for value in values]


def page_url(state: QueryDict, **extra: Any) -> str:
    """The page of these groups (the same filters), with `extra` parameters."""
    query = [(name, value) for name, value in state_fields(state) if value]
    query += [(name, value) for name, value in extra.items()]
    return f"{reverse('memory:review_duplicates')}?{urlencode(query)}" if query else reverse("memory:review_duplicates")
