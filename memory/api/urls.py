"""/api/v1/: the REST API's resources. Ids are path segments of their own (memory.converters)."""

from django.urls import path

from memory.api import history, memories, search

app_name = "api"

urlpatterns = [
    path("memories/", memories.MemoryList.as_view(), name="memories"),
    path("memories/<id:memory_id>/", memories.MemoryDetail.as_view(), name="memory"),
    path("search/", search.Search.as_view(), name="search"),
    path("history/", history.HistoryList.as_view(), name="history"),
    path("history/<int:entry_id>/", history.HistoryDetail.as_view(), name="history_entry"),
    path("history/<int:entry_id>/revert/", history.HistoryRevert.as_view(), name="history_revert"),
]
