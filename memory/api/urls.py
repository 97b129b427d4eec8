"""/api/v1/: the REST API's resources. Ids are path segments of their own (memory.web.converters)."""

from django.urls import path

from memory.api import (
    activity,
    cards,
    erasures,
    history,
    images,
    links,
    memories,
    messages,
    overview,
    people,
    search,
    sensitive,
    threads,
)

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
    path("images/", images.ImageList.as_view(), name="images"),
    path("images/<id:image_id>/", images.ImageDetail.as_view(), name="image"),
    path("images/<id:image_id>/content/", images.ImageContent.as_view(), name="image_content"),
    path("links/", links.LinkList.as_view(), name="links"),
    path("links/<id:relation_id>/", links.LinkDetail.as_view(), name="link"),
    path("users/", people.UserList.as_view(), name="users"),
    path("users/<id:owner_id>/", people.UserDetail.as_view(), name="user"),
    path("users/<id:owner_id>/erase/", erasures.UserErase.as_view(), name="user_erase"),
    path("agents/", people.AgentList.as_view(), name="agents"),
    path("agents/<id:owner_id>/", people.AgentDetail.as_view(), name="agent"),
    path("stats/", overview.Stats.as_view(), name="stats"),
    path("graph/", overview.Graph.as_view(), name="graph"),
    path("search/", search.Search.as_view(), name="search"),
    path("activity/", activity.ActivityList.as_view(), name="activity"),
    path("activity/<str:event_id>/", activity.ActivityDetail.as_view(), name="activity_event"),
    path("findings/", sensitive.FindingList.as_view(), name="findings"),
    path("findings/<int:finding_id>/redact/", sensitive.FindingRedact.as_view(), name="finding_redact"),
    path("findings/<int:finding_id>/dismiss/", sensitive.FindingDismiss.as_view(), name="finding_dismiss"),
    path("history/", history.HistoryList.as_view(), name="history"),
    path("history/<int:entry_id>/", history.HistoryDetail.as_view(), name="history_entry"),
    path("history/<int:entry_id>/revert/", history.HistoryRevert.as_view(), name="history_revert"),
]
