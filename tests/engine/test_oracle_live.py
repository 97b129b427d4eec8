"""What only a real Oracle server can confirm: run first on a new server (docs/oracle.md).

No Oracle text states these, or they depend on the server's settings, so each is checked live
before anything else relies on it; each failure message says what to change. The tests run when
OAM_TEST_ORACLE_DSN is set (conftest.py) and skip with that reason otherwise.
"""

from __future__ import annotations

import oracledb
import pytest

from memory.engine.stores.oracle import STANDARD_STRING_BYTES

pytestmark = pytest.mark.parametrize("backend", ["oracle"])


def test_a_stored_json_null_is_a_json_null_through_json_query(store):
    """The filter compiler reads a key with JSON_QUERY(... RETURNING JSON) and compares with
    JSON_EQUAL; a stored JSON null must come back as a JSON null, not SQL NULL."""
    store.add(["null note", "missing note"], "memory", record_ids=["m-null", "m-missing"], metadata=[{"a": None}, {}])
    found = [record.id for record in store.list("memory", metadata_filter={"a": None}, limit=None)]
    assert found == ["m-null"], (
        "JSON_QUERY(... RETURNING JSON) returned SQL NULL for a JSON null: switch the compiler's "
        "equality with null to JSON_EXISTS(v, '$?(@ == null)')"
    )
    negated = [record.id for record in store.list("memory", metadata_filter={"a": {"$not": None}}, limit=None)]
    assert negated == ["m-missing"]


def test_json_table_correlated_with_the_outer_row_inside_exists(store):
    """$array_contains is EXISTS (SELECT 1 FROM JSON_TABLE(<the outer row's value>, '$[*]' ...))."""
    store.add(
        ["one", "two", "three"],
        "memory",
        record_ids=["m1", "m2", "m3"],
        metadata=[{"tags": ["a", "b"]}, {"tags": ["b"]}, {"tags": "a"}],
    )
    found = [record.id for record in store.list("memory", metadata_filter={"tags": {"$array_contains": "a"}})]
    assert found == ["m1"], "JSON_TABLE inside EXISTS did not see the outer row (or lax mode wrapped a scalar)"
    any_of = store.list("memory", metadata_filter={"tags": {"$array_contains_any": ["a", "b"]}})
    assert [record.id for record in any_of] == ["m1", "m2"]


def test_binds_past_the_string_limit_go_as_clobs(store):
    """Strings past 4,000 bytes (unless MAX_STRING_SIZE=EXTENDED) inside JSON(:x), JSON_TABLE(:ids)
    and MERGE would raise ORA-01461 as LONG binds."""
    wide = "é" * 2500  # 5,000 bytes
    ids = [f"memory-{i:04d}-of-a-long-id" for i in range(200)]
    store.add(["x"] * len(ids), "memory", record_ids=ids, metadata={"note": wide})
    store.add(["y" * 6000], "memory", record_ids=["long"])
    assert len(store.list("memory", record_id=ids, limit=None)) == 200
    store.update("memory", ids[0], metadata={"note": wide + wide})
    assert store.get("memory", ids[0]).metadata == {"note": wide + wide}
    assert store.get("memory", "long").content == "y" * 6000
    assert store.dialect.max_string_bytes >= STANDARD_STRING_BYTES


def test_a_filtered_approximate_search_uses_the_hnsw_index(store_factory):
    """Oracle's simplest plan for a filtered approximate search excludes subqueries: the search's
    filters are binds, and the plan must show VECTOR INDEX HNSW SCAN (needs VECTOR_MEMORY_SIZE)."""
    store = store_factory(vector_index=True, approximate_accuracy=90)
    store.add([f"note {i}" for i in range(50)], "memory", user_ids="u1")
    statements: list[tuple[str, dict]] = []
    fetch = store._fetch

    def recording_fetch(sql, params=None, cursor=None):
        if "VECTOR_DISTANCE" in sql and "FETCH APPROX" in sql:
            statements.append((sql, dict(params or {})))
        return fetch(sql, params, cursor)

    store._fetch = recording_fetch
    store.search("note", k=5, user_id="u1", exact_user_match=True, record_types=["memory"])
    assert statements, "the search sent no approximate top-k"
    sql, params = statements[0]
    with store._session() as connection:
        # The plan of the statement as run, binds and all: EXPLAIN PLAN would not peek at them.
        cursor = store.dialect.cursor(connection)
        cursor.execute(sql, params, fetch_lobs=False)
        cursor.fetchall()
        try:
            cursor.execute("SELECT plan_table_output FROM TABLE(DBMS_XPLAN.DISPLAY_CURSOR(format => 'BASIC'))")
        except oracledb.DatabaseError as error:
            pytest.fail(f"reading the plan needs SELECT on V$SQL_PLAN (SELECT_CATALOG_ROLE): {error}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "VECTOR INDEX HNSW SCAN" in plan, (
        "the filtered approximate search does not use the HNSW index: check VECTOR_MEMORY_SIZE, or "
        f"try OAM_ORACLE_VECTOR_INDEX_TRANSFORM=true. Plan:\n{plan}"
    )
