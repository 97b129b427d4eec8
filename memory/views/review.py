"""The review queues (/review/, memory.queries.review): one queue at a time as a tab with every queue's
count, and the one-click decisions on its rows (accept or revert an automatic link, purge the
expired records, keep one memory of a contradiction or dismiss it). Decisions are POSTs for
curators; each goes back to the queue it came from."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from memory.curation import CurationError, mark, undone_by
from memory.engine import LIFECYCLE_RELATIONS
from memory.models import Action, BulkChange, CurationEntry, ObjectKind, ReviewKind, ReviewMark
from memory.queries.review import QUEUES, counts, queue_page, recent_marks, sees_mark
from memory.services import get_agent_memory
from memory.text import plural, quoted
from memory.views.common import curation, gone, memory_words, refuse, render_page, safe_next
from memory.web.access import curator_required, viewer_required
from memory.web.filters import DEFAULT_DAYS, ReviewFilters
from memory.web.forms.review import KeepForm

RETIRED_BY = {"supersedes": "superseded by", "refines": "refined by", "duplicates": "a duplicate of"}
"""How a message says what a lifecycle link (source → target) makes of its target."""


def back(request: HttpRequest, queue: str) -> str:
    """The queue page the decision was made on (`next`), else that queue's first page."""
    return safe_next(request, f"{reverse('memory:review')}?queue={queue}")


def refused(request: HttpRequest, message: str, queue: str) -> HttpResponse:
    """400: a decision that cannot be made as asked, said on a page that links back to the queue."""
    return render(request, "review/refused.html", {"message": message, "back": back(request, queue)}, status=400)


@viewer_required
@vary_on_headers("HX-Request")
def review(request: HttpRequest) -> HttpResponse:
    """Every queue's count as tabs, and one page of the chosen queue (`queue`, `user_id`, `days`,
    `cursor`, `limit`)."""
    form = ReviewFilters(request.GET, queues={name: queue.label for name, queue in QUEUES.items()})
    resolved = resolved_change(request.GET.get("resolved"))
    reverted = reverted_link(request.GET.get("reverted"))
    rows, next_cursor, tallies, arguments = [], None, {}, {"queue": form.default_queue, "days": DEFAULT_DAYS}
    if form.is_valid():
        arguments = form.review_arguments()
        agent_memory = get_agent_memory()
        try:
            tallies = counts(agent_memory, arguments["user_id"], arguments["days"])
            rows, next_cursor = queue_page(agent_memory, **arguments)
        except ValueError as error:  # a damaged cursor, a user id beyond the engine's limits
            refuse(form, error)
    return render_page(
        request,
        "review/queues.html",
        {
            "form": form,
            "queues": [(name, queue.label, tallies.get(name)) for name, queue in QUEUES.items()],
            "queue": arguments["queue"],
            "queue_template": QUEUES[arguments["queue"]].template,
            "days": arguments["days"],
            "user_id": arguments.get("user_id") or "",
            "rows": rows,
            "next_cursor": next_cursor,
            "marks": recent_marks(get_agent_memory()),
            "here": here(request),
            "resolved": resolved,
            "resolved_undone": resolved is not None and undone_by(resolved) is not None,
            "reverted": reverted,
            "reverted_undone": reverted is not None and reverted.reverted_by.exists(),
        },
        fragment="queue",
        status=400 if form.errors else 200,
    )


def here(request: HttpRequest) -> str:
    """This queue page, where decisions come back to (without the change just made)."""
    query = request.GET.copy()
    query.pop("resolved", None)
    query.pop("reverted", None)
    return f"{request.path}?{query.urlencode()}" if query else request.path


def reverted_link(value: str | None) -> CurationEntry | None:
    """The automatic link just reverted (a `reverted` parameter: the entry of its deletion), if it exists."""
    if not value or not value.isdigit():
        return None
    return CurationEntry.objects.filter(pk=int(value), object_kind=ObjectKind.LINK, action=Action.UNLINK).first()


def resolved_change(value: str | None) -> BulkChange | None:
    """The contradiction just resolved (a `resolved` parameter: its bulk change), if it exists."""
    if not value or not value.isdigit():
        return None
    return BulkChange.objects.filter(pk=int(value), summary__startswith="Resolved a contradiction").first()


def lifecycle_link(request: HttpRequest, relation_id: str):
    """The automatic lifecycle link a decision names, or the answer that refuses it."""
    try:
        link = get_agent_memory().get_relation(relation_id)
    except KeyError:
        return None, gone(request, ObjectKind.LINK, relation_id)
    if link.relation_type not in LIFECYCLE_RELATIONS:
        return None, refused(request, f"This link is a {link.relation_type} link now: it retires no memory.", "llm")
    return link, None


@curator_required
@require_POST
def review_accept(request: HttpRequest, relation_id: str) -> HttpResponse:
    """Keep an automatic link and the retirement it made: the memory stays invalid, and the link
    leaves the queue (a review mark, with who and when)."""
    link, answer = lifecycle_link(request, relation_id)
    if answer:
        return answer
    mark(curation(request).actor, ReviewKind.ACCEPTED, link)
    retired, by = memory_words(link.target_record_id), memory_words(link.source_record_id)
    messages.success(request, f"Accepted: {retired} stays invalid, {RETIRED_BY[link.relation_type]} {by}.")
    return redirect(back(request, "llm"))


@curator_required
@require_POST
def review_revert(request: HttpRequest, relation_id: str) -> HttpResponse:
    """Delete an automatic link through the curation service (recorded, undoable from the
    history): the memory it retired is valid again unless another link retires it."""
    link, answer = lifecycle_link(request, relation_id)
    if answer:
        return answer
    service = curation(request)
    effects = service.link_effects(remove=link)
    try:
        entry = service.delete_link(relation_id)
    except KeyError:
        return gone(request, ObjectKind.LINK, relation_id)
    outcome = "is valid again" if effects else "is still invalid (another link or its own flag retires it)"
    messages.success(request, f"Reverted the automatic link: {memory_words(link.target_record_id)} {outcome}.")
    # The queue page shows the deletion with its undo (`reverted`), as it does a resolved contradiction.
    target = back(request, "llm")
    return redirect(f"{target}{'&' if '?' in target else '?'}reverted={entry.pk}")


@curator_required
@require_POST
def review_keep(request: HttpRequest, relation_id: str) -> HttpResponse:
    """Resolve a contradiction: keep one memory, supersede the other (one bulk change)."""
    form = KeepForm(request.POST)
    if not form.is_valid():
        return refused(request, "Say which memory to keep.", "contradictions")
    try:
        change = curation(request).resolve_contradiction(relation_id, form.cleaned_data["keep"])
    except KeyError:
        return gone(request, ObjectKind.LINK, relation_id)
    except (CurationError, ValueError) as error:
        return refused(request, str(error), "contradictions")
    # The queue page shows the change with its undo (`resolved`), as the near-duplicate finder does.
    target = back(request, "contradictions")
    return redirect(f"{target}{'&' if '?' in target else '?'}resolved={change.pk}")


@curator_required
@require_POST
def review_dismiss(request: HttpRequest, relation_id: str) -> HttpResponse:
    """Leave a contradiction as it is (both memories stay valid); it leaves the queue."""
    try:
        link = get_agent_memory().get_relation(relation_id)
    except KeyError:
        return gone(request, ObjectKind.LINK, relation_id)
    if link.relation_type != "contradicts":
        return refused(request, f"This link is a {link.relation_type} link now, not a contradiction.", "contradictions")
    mark(curation(request).actor, ReviewKind.DISMISSED, link)
    messages.success(request, "Dismissed the contradiction: both memories stay as they are.")
    return redirect(back(request, "contradictions"))


@curator_required
@require_POST
def review_reopen(request: HttpRequest, mark_id: int) -> HttpResponse:
    """Take back an accept or a dismissal: the link is in its queue again."""
    review_mark = ReviewMark.objects.filter(pk=mark_id).first()
    if review_mark is not None and not sees_mark(get_agent_memory(), review_mark):
        review_mark = None  # a decision about memories outside a scoped login's scope: as a missing one
    if review_mark is None:
        return refused(request, "That decision was already taken back.", "llm")
    review_mark.delete()
    queue = "llm" if review_mark.kind == ReviewKind.ACCEPTED else "contradictions"
    messages.success(request, "Reopened: the link is back in its queue.")
    return redirect(back(request, queue))


@curator_required
@require_http_methods(["GET", "POST"])
def review_purge(request: HttpRequest) -> HttpResponse:
    """GET: what a purge deletes (every expired record of the store, whoever it belongs to) and
    that it can be undone; POST: purge, recorded as one bulk change."""
    agent_memory = get_agent_memory()
    if request.method == "POST":
        result = curation(request).purge_expired()
        if result.change is None:
            messages.info(request, "Nothing had expired: nothing was purged.")
        else:
            unsaved = (
                f" {result.unsaved} expired during the purge and cannot be brought back." if result.unsaved else ""
            )
            messages.success(
                request,
                f"Purged {plural(result.purged, 'expired record')}. Undo it from the history "
                f"(“{result.change.summary}”) to put them back, still expired.{unsaved}",
            )
        return redirect(back(request, "expired"))
    expired = agent_memory.list_expired(limit=None)
    kinds: dict[str, int] = {}
    for record in expired:
        kinds[record.record_type] = kinds.get(record.record_type, 0) + 1
    return render_page(
        request,
        "review/purge.html",
        {
            "total": len(expired),
            "kinds": sorted(kinds.items()),
            "cancel_url": back(request, "expired"),
            "back": back(request, "expired"),
            "action_label": f"Purge {plural(len(expired), 'expired record')}",
        },
    )


FINDING_GONE = "That finding is gone: its record changed or went since the page was shown."


@viewer_required
@vary_on_headers("HX-Request")
def review_sensitive(request: HttpRequest) -> HttpResponse:
    """/review/sensitive/: the review page on its `sensitive` queue (secrets and personal data)."""
    request.GET = request.GET.copy()
    request.GET["queue"] = "sensitive"
    return review(request)


@curator_required
@require_POST
def review_redact(request: HttpRequest, finding_id: int) -> HttpResponse:
    """Redact a finding: its value becomes [REDACTED:<kind>] in the record (a recorded edit), in
    the record's history, the activity log and the files (memory.curation.sensitive)."""
    try:
        finding = get_agent_memory().get_finding(str(finding_id))
        curation(request).redact_finding(str(finding_id))
    except KeyError:
        return refused(
            request, "That finding is gone: its record changed or went since the page was shown.", "sensitive"
        )
    except (CurationError, ValueError) as error:
        return refused(request, str(error), "sensitive")
    record = f"the {finding.record_type.replace('_', ' ')} {quoted(finding.masked_text)}"
    messages.success(request, f"Redacted {finding.preview} from {record}, its history and the activity log.")
    return redirect(back(request, "sensitive"))


@curator_required
@require_POST
def review_not_sensitive(request: HttpRequest, finding_id: int) -> HttpResponse:
    """Judge a finding not sensitive: it leaves the queue for this record and this value."""
    try:
        dismissal = curation(request).dismiss_finding(str(finding_id))
    except KeyError:
        return refused(
            request, "That finding is gone: its record changed or went since the page was shown.", "sensitive"
        )
    messages.success(request, f"Marked {dismissal.preview} not sensitive: it stays as it is.")
    return redirect(back(request, "sensitive"))
