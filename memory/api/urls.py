"""/api/v1/: the REST API's resources. Ids are path segments of their own (memory.converters)."""

from django.urls import path

from memory.api import cards, memories, messages, threads

app_name = "api"

urlpatterns = [
    path("memories/", memories.MemoryList.as_view(), name="memories"),
    path("memories/<id:memory_id>/", memories.MemoryDetail.as_view(), name="memory"),
    path("threads/", threads.ThreadList.as_view(), name="threads"),
    path("threads/<id:thread_id>/", threads.ThreadDetail.as_view(), name="thread"),
    path("threads/<id:thread_id>/messages/", messages.MessageList.as_view(), name="thread_messages"),
    path(
        "threads/<id:thread_id>/messages/<id:message_id>/",
        messages.MessageDetail.as_view(),
        name="thread_message",
    ),
    path("threads/<id:thread_id>/card/", cards.ContextCardView.as_view(), name="thread_card"),
    path("threads/<id:thread_id>/summary/", cards.SummaryView.as_view(), name="thread_summary"),
]
