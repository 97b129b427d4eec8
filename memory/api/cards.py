"""/api/v1/threads/<id>/card/ and /summary/: a thread's context card with every parameter, its
parts and token counts; the summary as the card uses it, and its refresh by the LLM.

Reading writes nothing: the card and the summary are built from the stored summary even when a
refresh is due (`refresh_summary_if_due=False`, as the dashboard's card preview does), and say
how many messages the agent's next card would first fold in. A refresh is a curator's POST,
recorded in the history.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView, form_parameters, query_form
from memory.api.responses import errors_of
from memory.api.serializers.cards import ContextCardSerializer, SummaryRefreshSerializer, ThreadSummarySerializer
from memory.curation import summarized_through
from memory.engine import AgentMemory, ContextCard, Thread, estimate_tokens
from memory.web.forms.search import ContextCardForm


class LlmFailed(exceptions.APIException):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_detail = "The LLM failed: try again later."
    default_code = "llm_failed"


def section_tokens(**section: Any) -> int:
    """The token estimate of one section of a card, rendered as the card renders it."""
    return estimate_tokens(ContextCard(**section).content)


def card_data(thread: Thread, card: ContextCard, as_of_message_id: str | None) -> dict[str, Any]:
    results = [
        {
            "rank": rank,
            "id": result.id,
            "record_type": result.record.record_type,
            "content": result.content,
            "status": str(result.record.status),
            "timestamp": result.timestamp,
            "user_id": getattr(result.record, "user_id", None),
            "agent_id": getattr(result.record, "agent_id", None),
            "thread_id": getattr(result.record, "thread_id", None),
            "metadata": result.metadata,
            "distance": result.distance,
            "scores": result.scores,
            "formatted_content": result.formatted_content,
            "tokens": estimate_tokens(result.formatted_content),
        }
        for rank, result in enumerate(card.results, 1)
    ]
    recent = [
        {
            "id": message.id,
            "role": message.role,
            "content": message.text,
            "timestamp": message.timestamp,
            "metadata": message.metadata,
        }
        for message in card.recent_messages or ()
    ]
    return {
        "thread_id": thread.thread_id,
        "content": card.content,
        "summary": card.summary,
        "topics": list(card.topics) if card.topics else None,
        "relevant_results": results,
        "recent_messages": recent,
        "tokens": {
            "card": estimate_tokens(card.content),
            "summary": section_tokens(summary=card.summary),
            "topics": section_tokens(topics=card.topics),
            "relevant_results": section_tokens(relevant_results=card.relevant_results),
            "recent_messages": section_tokens(recent_messages=card.recent_messages),
        },
        "as_of_message_id": as_of_message_id,
        "messages_due_for_summary": thread.messages_due_for_summary(),
    }


class ContextCardView(EngineView):
    @extend_schema(
        operation_id="threads_card_retrieve",
        summary="Get a thread's context card",
        description="The card an agent puts in its prompt (the engine's Thread.get_context_card, every "
        "parameter under its name), as of now or right after `as_of_message_id` was stored: its text "
        "(`content`) and its parts (summary, topics, the relevant records it chose with their scores, "
        "recent messages) with token estimates. A read: a summary refresh that is due is not made "
        "(`messages_due_for_summary` says so); POST …/summary/ makes it.",
        parameters=form_parameters(ContextCardForm),
        responses={200: ContextCardSerializer, **errors_of(400, 404)},
        tags=["threads"],
    )
    def get(self, request: Request, thread_id: str) -> Response:
        thread = self.agent_memory.get_thread(thread_id)
        arguments = query_form(ContextCardForm, request).card_arguments()
        try:
            card = thread.get_context_card(**arguments, refresh_summary_if_due=False)
        except KeyError:  # the thread exists: it is the message the card is asked as of
            raise exceptions.ValidationError({"as_of_message_id": ["No such message in this thread."]}) from None
        return Response(ContextCardSerializer(card_data(thread, card, arguments.get("as_of_message_id"))).data)


def summary_data(agent_memory: AgentMemory, thread: Thread) -> dict[str, Any]:
    """The summary as the context card uses it (the stored one, else a transcript), read without
    asking the LLM or writing anything."""
    record = agent_memory.get_thread_record(thread.thread_id)
    card = thread.get_context_card(max_relevant_results=0, refresh_summary_if_due=False)
    source = "llm" if record.summary else "transcript" if card.summary else "none"
    return {
        "thread_id": thread.thread_id,
        "summary": card.summary,
        "topics": list(card.topics) if card.topics else None,
        "source": source,
        "summarized_through": summarized_through(record.settings),
        "messages_due_for_summary": thread.messages_due_for_summary(),
    }


class SummaryView(EngineView):
    @extend_schema(
        operation_id="threads_summary_retrieve",
        summary="Get a thread's summary",
        description="The summary the thread's context card uses: the one its LLM keeps, else a "
        "transcript of its latest messages (`source`). A read: a refresh that is due is not made.",
        responses={200: ThreadSummarySerializer, **errors_of(404)},
        tags=["threads"],
    )
    def get(self, request: Request, thread_id: str) -> Response:
        return Response(
            ThreadSummarySerializer(summary_data(self.agent_memory, self.agent_memory.get_thread(thread_id))).data
        )

    @extend_schema(
        operation_id="threads_summary_refresh",
        summary="Refresh a thread's summary",
        description="Asks the thread's LLM to fold the messages stored since the last summary into it "
        "now, with new topics (recorded in the history; a revert puts the old summary back). "
        "`refreshed: false` when no message came since: the LLM was not asked and nothing changed. "
        "400 when the server has no LLM.",
        request=None,
        responses={200: SummaryRefreshSerializer, **errors_of(400, 404, 502)},
        tags=["threads"],
    )
    def post(self, request: Request, thread_id: str) -> Response:
        thread = self.agent_memory.get_thread(thread_id)
        if thread.llm is None:
            raise exceptions.ValidationError(
                "Refreshing a summary asks an LLM, and this server has none (OAM_LLM_BASE_URL, OAM_LLM_MODEL)."
            )
        try:
            entry = self.curation().refresh_summary(thread_id)
        except RuntimeError as error:  # the LLM's own failure (a ValueError: no LLM, a 400)
            raise LlmFailed(f"The LLM failed: {error}") from None
        return Response(
            SummaryRefreshSerializer({**summary_data(self.agent_memory, thread), "refreshed": entry is not None}).data
        )
