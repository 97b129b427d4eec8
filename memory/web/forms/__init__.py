"""The dashboard's forms, one module per kind of page: records (threads, messages, memories,
images, profiles, links), search and context cards, API tokens, export and import, the review
queues' decisions, the agent activity timeline's filters (`activity`). Their field rules, shared
with the API's serializers, are in `memory.web.fields`; the other list filters are in
`memory.web.filters`.
"""
