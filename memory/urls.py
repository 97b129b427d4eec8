"""The dashboard's URL map. Ids are path segments of their own (memory.converters)."""

from django.urls import path

from memory.views import (
    cards,
    duplicates,
    graph,
    history,
    images,
    links,
    maps,
    memories,
    messages,
    overview,
    people,
    preferences,
    search,
    threads,
    tokens,
    transfer,
)

app_name = "memory"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("threads/", threads.thread_list, name="thread_list"),
    path("threads/<id:thread_id>/", threads.thread_detail, name="thread_detail"),
    path("threads/<id:thread_id>/edit/", threads.thread_edit, name="thread_edit"),
    path("threads/<id:thread_id>/delete/", threads.thread_delete, name="thread_delete"),
    path("threads/<id:thread_id>/images/new/", messages.image_add, name="image_add"),
    path("threads/<id:thread_id>/card/", cards.card_preview, name="card_preview"),
    path("threads/<id:thread_id>/summary/refresh/", cards.summary_refresh, name="summary_refresh"),
    path("threads/<id:thread_id>/memories/extract/", cards.memories_extract, name="memories_extract"),
    path("threads/<id:thread_id>/messages/<id:message_id>/", messages.message_detail, name="message_detail"),
    path("threads/<id:thread_id>/messages/<id:message_id>/edit/", messages.message_edit, name="message_edit"),
    path("threads/<id:thread_id>/messages/<id:message_id>/delete/", messages.message_delete, name="message_delete"),
    path("memories/", memories.memory_list, name="memory_list"),
    path("memories/new/", memories.memory_create, name="memory_create"),
    path("memories/<id:memory_id>/", memories.memory_detail, name="memory_detail"),
    path("memories/<id:memory_id>/edit/", memories.memory_edit, name="memory_edit"),
    path("memories/<id:memory_id>/delete/", memories.memory_delete, name="memory_delete"),
    path("images/<id:image_id>/", images.image_detail, name="image_detail"),
    path("images/<id:image_id>/raw/", images.image_raw, name="image_raw"),
    path("images/<id:image_id>/edit/", images.image_edit, name="image_edit"),
    path("images/<id:image_id>/describe/", images.image_describe, name="image_describe"),
    path("images/<id:image_id>/delete/", images.image_delete, name="image_delete"),
    path("links/new/", links.link_create, name="link_create"),
    path("links/pick/", links.memory_picks, name="memory_picks"),
    path("links/<id:relation_id>/edit/", links.link_edit, name="link_edit"),
    path("links/<id:relation_id>/delete/", links.link_delete, name="link_delete"),
    path("search/", search.search, name="search"),
    path("review/duplicates/", duplicates.review_duplicates, name="review_duplicates"),
    path("graph/", graph.graph_page, name="graph"),
    path("graph/data/", graph.graph_data, name="graph_data"),
    path("graph/node/<id:memory_id>/", graph.graph_node, name="graph_node"),
    path("history/", history.history, name="history"),
    path("history/<int:entry_id>/", history.history_entry, name="history_entry"),
    path("history/<int:entry_id>/revert/", history.history_revert, name="history_revert"),
    path("preferences/theme/", preferences.set_theme, name="set_theme"),
    path("settings/tokens/", tokens.token_list, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke/", tokens.token_revoke, name="token_revoke"),
    path("settings/transfer/", transfer.transfer, name="transfer"),
    path("settings/transfer/export/", transfer.transfer_export, name="transfer_export"),
    path("settings/transfer/imports/<int:job_id>/", transfer.import_job, name="import_job"),
    path("settings/transfer/imports/<int:job_id>/resume/", transfer.import_resume, name="import_resume"),
    path("checks/run/", overview.check_run, name="check_run"),
    path("users/<id:owner_id>/map/", maps.user_map, name="user_map"),
]

for kind, plural in (("user", "users"), ("agent", "agents")):
    urlpatterns += [
        path(f"{plural}/", people.owner_list, {"kind": kind}, name=f"{kind}_list"),
        path(f"{plural}/<id:owner_id>/", people.owner_detail, {"kind": kind}, name=f"{kind}_detail"),
        path(f"{plural}/<id:owner_id>/edit/", people.owner_edit, {"kind": kind}, name=f"{kind}_edit"),
        path(f"{plural}/<id:owner_id>/delete/", people.owner_delete, {"kind": kind}, name=f"{kind}_delete"),
    ]
