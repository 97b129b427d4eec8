"""schemathesis over the whole OpenAPI schema: every operation drf-spectacular documents (every
endpoint, as they are added) is called with generated requests through the WSGI app, as a curator's
token, and each response goes through schemathesis's checks: no 5xx, a documented status, content
type and headers, a body that validates against the documented schema, and schema-violating input
refused with a 4xx.

Each operation is its own test over a fresh store (tests/conftest.py), seeded with one record of
each kind (and entries of the curation history) under known ids that the generated path parameters
use now and then, so that the found paths (200, 204, 412) are exercised as well as the 404s; no
rate limit applies. Generation is deterministic (derandomized, no example database): CI runs the
same cases every time.

One check is left out: `positive_data_acceptance` expects every schema-valid request to succeed,
but some 400s depend on more than one parameter or on the store (`user_id` with `unscoped=user_id`,
a `thread_id` that does not exist, an id of more than 512 bytes in UTF-8), which OpenAPI 3.0
cannot say. Those 400s are tested by each resource's own tests. And `negative_data_rejection` is
left out for a case whose violations the request does not carry to the server (a non-text value
in a multipart text field, an empty one, a value outside one branch of an anyOf that is inside
another): `not_negative_as_sent`.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import strategies as st
from PIL import Image
from schemathesis.checks import negative_data_rejection, positive_data_acceptance
from schemathesis.config import SchemathesisConfig
from schemathesis.core.mutations import OperatorKind
from schemathesis.core.parameters import ParameterLocation

from memory.curation import Actor, Curation
from memory.web.tokens import create_token

MIN_CASES = 1_000
"""Generated calls across the whole schema, at least."""


def api_schema() -> dict[str, Any]:
    """The schema /api/schema/?format=json serves, as JSON types (no lazy strings or tuples)."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


RAW_SCHEMA = api_schema()
OPERATIONS = sum(
    method in ("get", "post", "put", "patch", "delete")
    for path_item in RAW_SCHEMA["paths"].values()
    for method in path_item
)

schema = schemathesis.openapi.from_dict(RAW_SCHEMA, config=SchemathesisConfig())
schema.config.generation.update(
    # Share the budget between operations so that the whole run makes MIN_CASES calls and more
    # (the examples and coverage phases add their own cases), however many operations there are.
    max_examples=max(25, math.ceil(1.2 * MIN_CASES / max(OPERATIONS, 1))),
    deterministic=True,
    database="none",
)
# A request the schema forbids must be refused; a body too large to read at all (a 6 MB string
# in a field of 2,000 characters) is refused before validation, with 413, which also counts.
rejections = schema.config.checks.negative_data_rejection
rejections.expected_statuses = sorted({*rejections.expected_statuses, "413"})
schema.app = get_wsgi_application()

# --- a store with known records -----------------------------------------------------------------

KNOWN_IDS: dict[str, list[Any]] = {
    "memory_id": ["memory-1", "memory-2"],
    "thread_id": ["thread-1"],
    "message_id": ["message-1", "message-2"],
    "image_id": ["image-1"],
    "relation_id": ["link-1"],
    "owner_id": ["alice", "helper"],  # a user's and an agent's: /users/helper/ is a 404 (an agent)
    "entry_id": [],  # the history entries `seeded_store` makes (their ids come from the database)
    "event_id": [],  # the calls the activity log recorded while `seeded_store` wrote (uuids)
    "finding_id": [],  # the findings of sensitive data in the memory `seeded_store` writes with an address
}
"""The ids `seeded_store` writes, by the name of the path parameter that takes them: every path
parameter of the schema (test_every_path_parameter_has_known_ids)."""


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "teal").save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def seeded_store(agent_memory, curator, monkeypatch) -> None:
    agent_memory.add_user("alice", "Alice travels often and prefers window seats.")
    agent_memory.add_agent("helper", "A travel assistant.")
    thread = agent_memory.create_thread(thread_id="thread-1", user_id="alice", agent_id="helper")
    thread.add_messages(
        [
            {"id": "message-1", "role": "user", "content": "Book me a flight to Lisbon."},
            {"id": "message-2", "role": "assistant", "content": "A window seat, as usual?"},
        ]
    )
    agent_memory.add_memory(
        "Alice prefers window seats.", memory_type="preference", user_id="alice", memory_id="memory-1"
    )
    agent_memory.add_memory(
        "Alice flies to Lisbon in May.", memory_type="fact", thread_id="thread-1", memory_id="memory-2"
    )
    agent_memory.link_records("memory-2", "fact", "memory-1", "preference", "supports", relation_id="link-1")
    agent_memory.add_image(png(), description="A teal square.", image_id="image-1", user_id="alice")
    # The history: a creation (a revert deletes it), an edit (a revert writes it back), a deletion
    # (a revert restores it), made with a token as the API makes them.
    curation = Curation(agent_memory, Actor(curator, via="api", token_name="seed"))
    entries = [
        curation.create_memory(content="Alice packs light.", memory_type="preference", user_id="alice"),
        curation.update_memory("memory-2", version=1, content="Alice flies to Lisbon in June."),
        curation.create_memory(content="Alice once flew to Oslo.", memory_type="fact", memory_id="memory-3"),
    ]
    entries.append(curation.delete_memory("memory-3"))
    monkeypatch.setitem(KNOWN_IDS, "entry_id", [entry.pk for entry in entries])
    agent_memory.add_memory("Alice's travel agent is agent@example.com.", user_id="alice", memory_id="memory-4")
    monkeypatch.setitem(KNOWN_IDS, "finding_id", [int(finding.id) for finding in agent_memory.list_findings()])
    agent_memory.activity.flush()
    monkeypatch.setitem(KNOWN_IDS, "event_id", [event.id for event in agent_memory.list_activity(limit=5)])


@schema.hook
def flatmap_path_parameters(context, path_parameters: dict[str, Any] | None) -> st.SearchStrategy:
    """Now and then, a known record's id instead of the generated one (which is almost never found)."""
    if not path_parameters:
        return st.just(path_parameters)
    known = {name: st.sampled_from(KNOWN_IDS[name]) for name in path_parameters if KNOWN_IDS.get(name)}
    if not known:
        return st.just(path_parameters)
    return st.one_of(st.just(path_parameters), st.fixed_dictionaries({**path_parameters, **known}))


def not_negative_as_sent(case) -> bool:
    """Whether every violation of a negative case is one the request does not carry to the
    server, which is then right to accept what it gets:

    - in a multipart body, a number or an object where there is a text field: a form part is
      text, and schemathesis sends such a value as its JSON spelling (`5.0`, `{}`), a valid value
      of the text field;
    - in a multipart body, a text field made empty (below its minLength): Werkzeug, which encodes
      the WSGI run's multipart bodies, writes an empty part without the line break before the
      next boundary, and Django's parser then reads no such field at all;
    - a value outside one branch of an anyOf or oneOf: schemathesis gives a query parameter that
      allows an empty value the branches "a string" and "the empty string", and a string that
      is not empty, sent as violating the second, is valid by the first;
    - the Authorization header's format: the test sends its own token.

    Any other violation in the case (a length, a missing field, a wrong type elsewhere) keeps the
    check."""
    mutations = case.meta.phase.data.mutations if case.meta is not None else ()
    multipart = (case.media_type or "").startswith("multipart/")

    def unseen(mutation) -> bool:
        if mutation.parameter_location is ParameterLocation.HEADER and mutation.parameter == "Authorization":
            return True
        if "/anyOf/" in mutation.schema_pointer or "/oneOf/" in mutation.schema_pointer:
            return True
        if multipart and mutation.parameter_location is ParameterLocation.BODY:
            retyped = mutation.operator is OperatorKind.CHANGE_TYPE and mutation.original_value == "string"
            field = mutation.schema_pointer.rsplit("/", 1)[-1]
            emptied = mutation.keywords == ("minLength",) and isinstance(case.body, dict) and case.body.get(field) == ""
            return retyped or emptied
        return False

    return bool(mutations) and all(unseen(mutation) for mutation in mutations)


# --- the run --------------------------------------------------------------------------------------

CALLS: Counter[str] = Counter()
"""Calls made, per operation."""
FOUND: Counter[str] = Counter()
"""2xx answers, per operation."""
THROTTLED: Counter[str] = Counter()
"""429 answers, per operation: none, or the run tested the rate limit instead of the operation."""


@pytest.fixture
def curator_token(curator, seeded_store, settings) -> str:
    # No rate limits: thousands of calls in a few seconds are the point here (the throttles read
    # their rates from the settings at each request: memory.api.throttling).
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": None, "user": None}}
    return create_token(curator, name="schemathesis", role="curator")[1]


def test_every_path_parameter_has_known_ids():
    names = {
        parameter["name"]
        for path_item in RAW_SCHEMA["paths"].values()
        for operation in path_item.values()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", ())
        if parameter["in"] == "path"
    }

    assert names == set(KNOWN_IDS)


@schema.parametrize()
# The store and the token are made once per operation, for all its cases: on purpose.
@hypothesis.settings(
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture, hypothesis.HealthCheck.too_slow]
)
def test_every_operation_conforms_to_the_schema(case, curator_token):
    CALLS[case.operation.label] += 1
    excluded = [positive_data_acceptance]
    if not_negative_as_sent(case):
        excluded.append(negative_data_rejection)
    response = case.call_and_validate(headers={"Authorization": f"Bearer {curator_token}"}, excluded_checks=excluded)
    if response.status_code < 300:
        FOUND[case.operation.label] += 1
    if response.status_code == 429:
        THROTTLED[case.operation.label] += 1


def test_the_run_made_enough_calls_and_found_records():
    """After the operations' tests (pytest keeps a module's order); skipped when only some ran.
    Every GET must have succeeded now and then: a run of nothing but 404s and 400s would test
    little (KNOWN_IDS and `seeded_store` give the ids that are found)."""
    if len(CALLS) < OPERATIONS:
        pytest.skip(f"only {len(CALLS)} of {OPERATIONS} operations were run")
    print(f"\nschemathesis: {sum(CALLS.values())} calls, {sum(FOUND.values())} answered 2xx:")
    for label, calls in sorted(CALLS.items()):
        print(f"  {label}: {calls} calls, {FOUND[label]} 2xx")
    assert sum(CALLS.values()) >= MIN_CASES, CALLS
    assert not THROTTLED, f"rate-limited: {THROTTLED}"
    never_found = sorted(label for label in CALLS if label.startswith("GET ") and not FOUND[label])
    assert not never_found, f"GET operations that never answered 2xx: {never_found}"
