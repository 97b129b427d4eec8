"""A thread's context card as its agent gets it (/threads/<thread_id>/card/), for any parameters
and as of any message; and the LLM actions on the thread's summary and memories."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from memory.engine import estimate_tokens, unrecorded
from memory.models import ObjectKind
from memory.queries.thread_activity import beside, served_card, served_cards
from memory.services import get_agent_memory
from memory.views.common import curation, gone, refuse, render_page, safe_next
from memory.web.access import curator_required, viewer_required
from memory.web.forms.search import ContextCardForm


@viewer_required
@vary_on_headers("HX-Request")
def card_preview(request: HttpRequest, thread_id: str) -> HttpResponse:
    """The card, section by section, with its token estimate and the records it chose; with htmx
    (on the thread page, and as its parameters change) just the card. Below it, the cards
    agents were actually served in the thread; `?served=<event id>` sets one of them beside
    today's rebuild (its link sets the same parameters, as of the message it was served at).

    Looking must not change the store: a summary refresh that is due is not made (it would ask
    the LLM and write an unrecorded summary); the page says the agent's next card will make it.
    Nor is the look recorded as a card served: it is no agent's call."""
    agent_memory = get_agent_memory()
    try:
        thread_record = agent_memory.get_thread_record(thread_id)
        thread = agent_memory.get_thread(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    form = ContextCardForm(request.GET)
    context: dict = {
        "thread": thread_record,
        "form": form,
        "llm": agent_memory.llm is not None,
        "summary_due": thread.messages_due_for_summary(),
    }
    if not request.htmx:  # the list is outside the card, which is all that htmx asks for
        context["served"], context["served_total"] = served_cards(agent_memory, thread_id)
    served_id = request.GET.get("served")
    compared = served_card(agent_memory, thread_id, served_id) if served_id else None
    context["served_missing"] = served_id if served_id and compared is None else None
    if form.is_valid():
        arguments = form.card_arguments()
        try:
            with unrecorded():
                card = thread.get_context_card(**arguments, refresh_summary_if_due=False)
            as_of = (
                agent_memory.get_message_record(thread_id, arguments["as_of_message_id"])
                if "as_of_message_id" in arguments
                else None
            )
        except KeyError:
            form.add_error("as_of_message_id", "No such message in this thread.")
        except ValueError as error:
            refuse(form, error)
        else:
            context.update(
                card=card,
                tokens=estimate_tokens(card.content),
                as_of=as_of,
                budget=arguments.get("token_budget"),
                beside=beside(compared, card) if compared else None,
            )
    status = 400 if form.errors else 200
    return render_page(request, "threads/card.html", context, fragment="card", status=status)


@curator_required
@require_POST
def summary_refresh(request: HttpRequest, thread_id: str) -> HttpResponse:
    """Ask the LLM to fold the messages since the last summary into it now (the button exists only
    with an LLM configured), then go back to `next` (the thread page's button) or the card."""
    try:
        entry = curation(request).refresh_summary(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    except (ValueError, RuntimeError) as error:  # no LLM, or the LLM's own failure
        messages.error(request, f"Could not refresh the summary: {error}")
    else:
        if entry is None:
            messages.info(request, "No messages since the last summary: nothing to summarise.")
        else:
            messages.success(request, "Refreshed the summary.")
    return redirect(safe_next(request, reverse("memory:card_preview", args=[thread_id])))


@curator_required
@require_POST
def memories_extract(request: HttpRequest, thread_id: str) -> HttpResponse:
    """Ask the LLM for memories from the messages no extraction has covered yet."""
    try:
        entries = curation(request).extract_memories(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    except (ValueError, RuntimeError) as error:
        messages.error(request, f"Could not extract memories: {error}")
    else:
        messages.success(request, f"Extracted {len(entries)} memor{'y' if len(entries) == 1 else 'ies'}.")
    return redirect("memory:card_preview", thread_id)
