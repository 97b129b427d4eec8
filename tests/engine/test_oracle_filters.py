"""OracleFilterCompiler without a server: exact SQL, key validation, and semantics checked by a test oracle.

No Oracle database runs here, so the SQL/JSON conditions the compiler emits are checked three ways:

1. the exact SQL text and binds of every filter of API_SPEC §5.4 and §5.3 (F-1 … F-8), so that any change to
   the generated SQL fails a test and has to be reviewed;
2. a small evaluator (`OracleConditionEvaluator`) that interprets exactly the SQL/JSON subset the compiler emits,
   following Oracle's documented semantics (below), runs every §5.4 row; and
3. the same evaluator is cross-checked against the SQLite backend (`SQLiteMemoryStore.list`) over one corpus of
   stored metadata and a broad set of filters, so that both backends select the same records.

The compiler uses no path-mode keyword, so every path runs in Oracle's default LAX mode. It therefore only takes
one object step (`$."key"`) at a time, on a value the condition also checks to be an object, and only iterates
(`$[*]`) a value the condition also checks to be an array: lax mode would otherwise unwrap arrays and wrap scalars.

Semantics the evaluator follows (Oracle Database 23ai JSON Developer's Guide and SQL Language Reference; the SQL/JSON
standard for the path modes):

- Lax mode (SQL/JSON standard, as in Db2's "sql-json-path-expression" and the SQL/JSON technical report): a member
  step applied to an array is applied to each element ("automatic unnesting of arrays"), elements that are not
  objects or lack the member giving nothing; on a scalar it gives nothing (a structural error, which lax mode
  turns into an empty result); a subscript step such as `[*]` applied to a non-array first wraps it in a
  one-element array ("automatic wrapping").
- JSON_QUERY: NULL for a NULL input ("If expr is null, then the function returns null", JSON_QUERY in the SQL
  Reference); defaults NULL ON EMPTY and NULL ON ERROR ("Empty-Field Clause", "Error Clause for SQL Functions and
  Conditions"); without a wrapper it is an error when the path matches several values, and a single scalar may be
  returned when `compatible` >= 20 ("Wrapper Clause for SQL/JSON Query Functions JSON_QUERY and JSON_TABLE").
  A JSON null in the data is returned as a JSON null, not as SQL NULL (assumed: the guide contrasts json_value,
  which returns SQL NULL, but we found no sentence stating it for json_query).
- JSON_TABLE: the row path `$[*]` gives one row per array element (lax wrapping as above); the JSON column
  `item JSON PATH '$'` is the row's value.
- JSON_EQUAL compares two JSON values: object member order is insignificant, array order and string case are
  significant, `JSON_EQUAL('{a:"1"}', '{a:1}')` is FALSE; FALSE ON ERROR by default ("JSON_EQUAL Condition"). Its
  result for a NULL operand is not documented: it is modelled as UNKNOWN, and a test shows every decision is the
  same if it is FALSE instead. Numbers compare by value (both sides are parsed from JSON text into NUMBER).
- The JSON type constructor parses textual JSON (a scalar, object or array); a SQL NULL input gives SQL NULL
  ("JSON Type Constructor").
- JSON_SERIALIZE returns a textual representation, formatted for readability only with PRETTY ("JSON_SERIALIZE"),
  so its first character tells an object (`{`) or an array (`[`) from a string (`"`) and the other scalars.
- SQL: Oracle treats a zero-length character value as NULL, so an empty-string bind arrives as NULL; a condition on
  NULL is UNKNOWN, NOT UNKNOWN is UNKNOWN, and CASE WHEN takes only TRUE into its THEN branch.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memory.engine import HashingEmbedder, SchemaPolicy, SQLiteMemoryStore
from memory.engine.filters import OracleFilterCompiler, json_path_step, parse_filter

DOC = "r.metadata"


def compile_oracle(metadata_filter: Any, bind_prefix: str = "mf") -> tuple[str, dict[str, Any]]:
    compiler = OracleFilterCompiler(bind_prefix=bind_prefix)
    sql = compiler.compile(parse_filter(metadata_filter), DOC)
    return sql, compiler.params


# ---------------------------------------------------------------------------------------------------------------
# The test oracle: an evaluator of the SQL/JSON subset OracleFilterCompiler emits.
# ---------------------------------------------------------------------------------------------------------------


class SqlNull:
    """SQL NULL (distinct from JSON null, which is Python None inside a document)."""

    def __repr__(self) -> str:
        return "NULL"


NULL = SqlNull()


def json_kind(value: Any) -> str:
    """The JSON-language type of a value parsed from JSON text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality: types kept apart (true is not 1), member order ignored, array order kept."""
    kind = json_kind(left)
    if kind != json_kind(right):
        return False
    if kind == "object":
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if kind == "array":
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return left == right


def and3(values: list[bool | None]) -> bool | None:
    """SQL three-valued AND (None is UNKNOWN)."""
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def or3(values: list[bool | None]) -> bool | None:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def not3(value: bool | None) -> bool | None:
    return None if value is None else not value


def serialize(value: Any) -> str:
    """JSON_SERIALIZE without PRETTY: compact JSON text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lax_member(value: Any, key: str) -> Any:
    """JSON_QUERY(value, '$."key"' RETURNING JSON) with its defaults, in lax mode."""
    if value is NULL:
        return NULL
    if isinstance(value, dict):
        items = [value[key]] if key in value else []
    elif isinstance(value, list):  # automatic unnesting: the step is applied to each element
        items = [element[key] for element in value if isinstance(element, dict) and key in element]
    else:  # a member step on a scalar: a structural error, an empty result in lax mode
        items = []
    if len(items) != 1:
        return NULL  # none: NULL ON EMPTY; several without a wrapper: an error, NULL ON ERROR
    return items[0]


def lax_rows(value: Any) -> list[Any]:
    """The rows of JSON_TABLE(value, '$[*]' ...) in lax mode: a non-array is wrapped as a one-element array."""
    if value is NULL:
        return []
    return list(value) if isinstance(value, list) else [value]


def sql_bind(value: Any) -> Any:
    """A Python bind value as the server sees it: a zero-length string is NULL in Oracle."""
    return NULL if value is None or value == "" else value


_SQL_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<bind>:[A-Za-z_]\w*)|(?P<quoted>\"[^\"]*\")"
    r"|(?P<word>[A-Za-z_][\w.]*)|(?P<number>\d+)|(?P<punct>[(),=]))",
    re.ASCII,
)
_ONE_STEP = re.compile(r'\$\."(?P<key>[^"\\]+)"')


def tokenize(sql: str) -> list[str]:
    tokens, position = [], 0
    while position < len(sql):
        match = _SQL_TOKEN.match(sql, position)
        assert match and match.end() > position, f"unexpected SQL at {sql[position : position + 40]!r}"
        tokens.append(match.group().strip())
        position = match.end()
    return [t for t in tokens if t]


class OracleConditionEvaluator:
    """Evaluates one compiled condition for one row whose `document_sql` column holds `metadata`.

    The grammar is what OracleFilterCompiler emits (plus `NOT (c)`, which it never emits, so that a NOT in place of
    the CASE fails on semantics rather than on syntax); anything else is an AssertionError, so a change in the
    generated SQL shows up here too. Results are SQL truth values: True, False or None (UNKNOWN).
    `json_equal_on_null` is JSON_EQUAL's result when an operand is NULL (undocumented; UNKNOWN by default).
    """

    def __init__(
        self, sql: str, params: dict[str, Any], document_sql: str = DOC, json_equal_on_null: bool | None = None
    ) -> None:
        self.tokens = tokenize(sql)
        self.params = params
        self.document_sql = document_sql
        self.json_equal_on_null = json_equal_on_null
        self.used_binds: set[str] = set()

    def evaluate(self, metadata: dict | None) -> bool | None:
        self.doc = NULL if metadata is None else metadata
        self.pos, self.rows = 0, []
        result = self._or()
        assert self.pos == len(self.tokens), f"trailing SQL: {self.tokens[self.pos :]}"
        assert self.used_binds == set(self.params), f"binds {set(self.params)} but used {self.used_binds}"
        return result

    def matches(self, metadata: dict | None) -> bool:
        """Whether a WHERE clause with this condition keeps the row (only TRUE does)."""
        return self.evaluate(metadata) is True

    # --- token helpers
    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _next(self) -> str:
        token = self._peek()
        assert token is not None, "unexpected end of SQL"
        self.pos += 1
        return token

    def _expect(self, *words: str) -> None:
        for word in words:
            token = self._next()
            assert token == word, f"expected {word!r}, got {token!r} at token {self.pos - 1}"

    def _string(self) -> str:
        token = self._next()
        assert token.startswith("'"), f"expected a string literal, got {token!r}"
        return token[1:-1].replace("''", "'")

    def _bind(self) -> Any:
        token = self._next()
        assert token.startswith(":"), f"expected a bind, got {token!r}"
        self.used_binds.add(token[1:])
        return sql_bind(self.params[token[1:]])

    # --- conditions
    def _or(self) -> bool | None:
        values = [self._and()]
        while self._peek() == "OR":
            self._next()
            values.append(self._and())
        return or3(values)

    def _and(self) -> bool | None:
        values = [self._primary()]
        while self._peek() == "AND":
            self._next()
            values.append(self._primary())
        return and3(values)

    def _primary(self) -> bool | None:
        token = self._next()
        if token == "(":
            value = self._case() if self._peek() == "CASE" else self._or()
            self._expect(")")
            return value
        if token == "NOT":
            self._expect("(")
            value = not3(self._or())
            self._expect(")")
            return value
        if token == "1":  # the constants `1 = 1` and `1 = 0`
            self._expect("=")
            return {"1": True, "0": False}[self._next()]
        if token == "JSON_EQUAL":
            return self._json_equal()
        if token == "EXISTS":
            return self._exists_json_table()
        if token == "JSON_SERIALIZE":
            return self._first_character_is()
        raise AssertionError(f"condition outside the evaluated subset: {token!r}")

    def _case(self) -> bool:
        """`CASE WHEN c THEN 0 ELSE 1 END = 1`: true unless c is TRUE (so UNKNOWN counts as "no match")."""
        self._expect("CASE", "WHEN")
        condition = self._or()
        self._expect("THEN", "0", "ELSE", "1", "END", "=", "1")
        return condition is not True

    def _json_equal(self) -> bool | None:
        self._expect("(")
        left = self._json()
        self._expect(",")
        right = self._json()
        self._expect(")")
        if left is NULL or right is NULL:
            return self.json_equal_on_null
        return json_equal(left, right)

    def _first_character_is(self) -> bool | None:
        """`JSON_SERIALIZE(v RETURNING VARCHAR2(1) TRUNCATE) = '{'` (or `'['`): v is an object (an array)."""
        self._expect("(")
        value = self._json()
        self._expect("RETURNING", "VARCHAR2", "(", "1", ")", "TRUNCATE", ")", "=")
        opening = self._string()
        assert opening in ("{", "["), f"only objects and arrays are recognised by their first character: {opening!r}"
        if value is NULL:
            return None  # JSON_SERIALIZE of NULL is NULL, and NULL = '{' is UNKNOWN
        return serialize(value)[0] == opening

    def _exists_json_table(self) -> bool:
        """EXISTS (SELECT 1 FROM JSON_TABLE(v, '$[*]' COLUMNS (item JSON PATH '$')) jt WHERE cond)."""
        self._expect("(", "SELECT", "1", "FROM", "JSON_TABLE", "(")
        value = self._json()
        self._expect(",")
        path = self._string()
        assert path == "$[*]", f"JSON_TABLE rows come from `$[*]` only: {path!r}"
        self._expect("COLUMNS", "(", "item", "JSON", "PATH", "'$'", ")", ")", "jt", "WHERE")
        rows = lax_rows(value)
        start, found = self.pos, False
        for row in rows or [NULL]:  # parse the WHERE condition at least once, even without rows
            self.pos = start
            self.rows.append(row)
            found = (self._or() is True and bool(rows)) or found
            self.rows.pop()
        self._expect(")")
        return found

    # --- JSON values (NULL for SQL NULL)
    def _json(self) -> Any:
        token = self._next()
        if token == self.document_sql:
            return self.doc
        if token == "JSON_QUERY":
            self._expect("(")
            value = self._json()
            self._expect(",")
            path = self._string()
            step = _ONE_STEP.fullmatch(path)
            assert step, f"only one quoted object step, without a path mode, is emitted: {path!r}"
            self._expect("RETURNING", "JSON", ")")
            return lax_member(value, step["key"])
        if token == "JSON":
            self._expect("(")
            text = self._bind()
            self._expect(")")
            if text is NULL:
                return NULL
            assert isinstance(text, str), f"JSON() parses text, not {text!r}"
            return json.loads(text)
        if token == "jt.item":
            assert self.rows, "jt.item outside a JSON_TABLE subquery"
            return self.rows[-1]
        raise AssertionError(f"JSON value outside the evaluated subset: {token!r}")


def oracle_matches(metadata_filter: Any, stored: dict | None) -> bool:
    sql, params = compile_oracle(metadata_filter)
    return OracleConditionEvaluator(sql, params).matches(stored)


# ---------------------------------------------------------------------------------------------------------------
# 1. Exact SQL for every filter of §5.4 and §5.3.
# ---------------------------------------------------------------------------------------------------------------

F5 = {"source": "chat", "tags": {"$array_contains": "trip", "$not": {"$array_contains": "archived"}}}

# The value of a top-level key, and the type checks on it (spelt out in full in "nested" and "contains" below).
SOURCE = "JSON_QUERY(r.metadata, '$.\"source\"' RETURNING JSON)"
TAGS = "JSON_QUERY(r.metadata, '$.\"tags\"' RETURNING JSON)"
TRAVEL = "JSON_QUERY(r.metadata, '$.\"travel\"' RETURNING JSON)"
REVIEW = "JSON_QUERY(r.metadata, '$.\"review\"' RETURNING JSON)"
ITEMS = "JSON_QUERY(r.metadata, '$.\"items\"' RETURNING JSON)"
TAGS_IS_ARRAY = f"JSON_SERIALIZE({TAGS} RETURNING VARCHAR2(1) TRUNCATE) = '['"
ITEMS_IS_ARRAY = f"JSON_SERIALIZE({ITEMS} RETURNING VARCHAR2(1) TRUNCATE) = '['"
TRAVEL_IS_OBJECT = f"JSON_SERIALIZE({TRAVEL} RETURNING VARCHAR2(1) TRUNCATE) = '{{'"
REVIEW_IS_OBJECT = f"JSON_SERIALIZE({REVIEW} RETURNING VARCHAR2(1) TRUNCATE) = '{{'"


def has_member(array_sql: str, bind: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM JSON_TABLE({array_sql}, '$[*]' COLUMNS (item JSON PATH '$')) jt "
        f"WHERE JSON_EQUAL(jt.item, JSON(:{bind})))"
    )


# id: (filter, exact SQL, exact binds)
COMPILED = {
    "list": (
        {"tags": ["prod", "urgent"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["prod", "urgent"]'},
    ),
    "list-reordered": (
        {"tags": ["urgent", "prod"]},
        f"JSON_EQUAL({TAGS}, JSON(:mf0))",
        {"mf0": '["urgent", "prod"]'},
    ),
    "list-short": ({"tags": ["prod"]}, f"JSON_EQUAL({TAGS}, JSON(:mf0))", {"mf0": '["prod"]'}),
    "nested": (
        {"review": {"status": "open"}},
        "(JSON_SERIALIZE(JSON_QUERY(r.metadata, '$.\"review\"' RETURNING JSON) RETURNING VARCHAR2(1) TRUNCATE)"
        " = '{' AND "
        "JSON_EQUAL(JSON_QUERY(JSON_QUERY(r.metadata, '$.\"review\"' RETURNING JSON), '$.\"status\"' RETURNING JSON),"
        " JSON(:mf0)))",
        {"mf0": '"open"'},
    ),
    "scalar-slack": ({"source": "slack"}, f"JSON_EQUAL({SOURCE}, JSON(:mf0))", {"mf0": '"slack"'}),
    "contains": (
        {"tags": {"$array_contains": "trip"}},
        "(JSON_SERIALIZE(JSON_QUERY(r.metadata, '$.\"tags\"' RETURNING JSON) RETURNING VARCHAR2(1) TRUNCATE)"
        " = '[' AND "
        "(EXISTS (SELECT 1 FROM JSON_TABLE(JSON_QUERY(r.metadata, '$.\"tags\"' RETURNING JSON), '$[*]' "
        "COLUMNS (item JSON PATH '$')) jt WHERE JSON_EQUAL(jt.item, JSON(:mf0)))))",
        {"mf0": '"trip"'},
    ),
    "contains-all-of": (
        {"tags": {"$array_contains": ["trip", "urgent"]}},
        f"({TAGS_IS_ARRAY} AND ({has_member(TAGS, 'mf0')} AND {has_member(TAGS, 'mf1')}))",
        {"mf0": '"trip"', "mf1": '"urgent"'},
    ),
    "contains-any": (
        {"tags": {"$array_contains_any": ["trip", "urgent"]}},
        f"({TAGS_IS_ARRAY} AND ({has_member(TAGS, 'mf0')} OR {has_member(TAGS, 'mf1')}))",
        {"mf0": '"trip"', "mf1": '"urgent"'},
    ),
    "not-contains": (
        {"tags": {"$not": {"$array_contains": "archived"}}},
        f"(CASE WHEN ({TAGS_IS_ARRAY} AND ({has_member(TAGS, 'mf0')})) THEN 0 ELSE 1 END = 1)",
        {"mf0": '"archived"'},
    ),
    "F5": (
        F5,
        f"JSON_EQUAL({SOURCE}, JSON(:mf0)) AND "
        f"(({TAGS_IS_ARRAY} AND ({has_member(TAGS, 'mf1')})) AND "
        f"(CASE WHEN ({TAGS_IS_ARRAY} AND ({has_member(TAGS, 'mf2')})) THEN 0 ELSE 1 END = 1))",
        {"mf0": '"chat"', "mf1": '"trip"', "mf2": '"archived"'},
    ),
    "not-scalar": (
        {"source": {"$not": "chat"}},
        f"(CASE WHEN JSON_EQUAL({SOURCE}, JSON(:mf0)) THEN 0 ELSE 1 END = 1)",
        {"mf0": '"chat"'},
    ),
    "F1": ({"source": "chat"}, f"JSON_EQUAL({SOURCE}, JSON(:mf0))", {"mf0": '"chat"'}),
    "F2": (
        {"travel": {"need": "transit"}},
        f"({TRAVEL_IS_OBJECT} AND JSON_EQUAL(JSON_QUERY({TRAVEL}, '$.\"need\"' RETURNING JSON), JSON(:mf0)))",
        {"mf0": '"transit"'},
    ),
    "F3": ({"tags": ["trip", "urgent"]}, f"JSON_EQUAL({TAGS}, JSON(:mf0))", {"mf0": '["trip", "urgent"]'}),
    "F4": (
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"]},
        f"JSON_EQUAL({SOURCE}, JSON(:mf0)) AND "
        f"({TRAVEL_IS_OBJECT} AND JSON_EQUAL(JSON_QUERY({TRAVEL}, '$.\"need\"' RETURNING JSON), JSON(:mf1))) AND "
        f"JSON_EQUAL({TAGS}, JSON(:mf2))",
        {"mf0": '"chat"', "mf1": '"transit"', "mf2": '["trip", "urgent"]'},
    ),
    "F6": ({"source": "slack"}, f"JSON_EQUAL({SOURCE}, JSON(:mf0))", {"mf0": '"slack"'}),
    "F7": (
        {"review": {"status": "open"}},
        f"({REVIEW_IS_OBJECT} AND JSON_EQUAL(JSON_QUERY({REVIEW}, '$.\"status\"' RETURNING JSON), JSON(:mf0)))",
        {"mf0": '"open"'},
    ),
    "F8": ({"tags": ["prod", "urgent"]}, f"JSON_EQUAL({TAGS}, JSON(:mf0))", {"mf0": '["prod", "urgent"]'}),
}


@pytest.mark.parametrize("filter_id", list(COMPILED))
def test_each_spec_filter_compiles_to_this_exact_sql_and_binds(filter_id):
    metadata_filter, expected_sql, expected_params = COMPILED[filter_id]
    sql, params = compile_oracle(metadata_filter)
    assert sql == expected_sql
    assert params == expected_params
    assert all(type(p) is str for p in params.values())  # every value travels as JSON text


N = "JSON_QUERY(r.metadata, '$.\"n\"' RETURNING JSON)"
E = "JSON_QUERY(r.metadata, '$.\"e\"' RETURNING JSON)"

# Further shapes whose SQL is pinned: scalars of every JSON type, exact lists holding objects, members that are
# objects, lists and JSON null, empty operands, an empty object, two levels of nesting, and a double negation.
MORE_COMPILED = [
    pytest.param({"n": 1}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "1"}, id="number"),
    pytest.param({"n": 1.5}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "1.5"}, id="float"),
    pytest.param({"n": -7}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "-7"}, id="negative"),
    pytest.param({"n": "1"}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": '"1"'}, id="numeric-string"),
    pytest.param({"n": True}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "true"}, id="true"),
    pytest.param({"n": False}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "false"}, id="false"),
    pytest.param({"n": None}, f"JSON_EQUAL({N}, JSON(:mf0))", {"mf0": "null"}, id="null"),
    pytest.param(
        {"items": [{"a": 1}, [None]]}, f"JSON_EQUAL({ITEMS}, JSON(:mf0))", {"mf0": '[{"a": 1}, [null]]'}, id="list"
    ),
    pytest.param(
        {"items": {"$array_contains": {"a": 1}}},
        f"({ITEMS_IS_ARRAY} AND ({has_member(ITEMS, 'mf0')}))",
        {"mf0": '{"a": 1}'},
        id="contains-object",
    ),
    pytest.param(
        {"items": {"$array_contains_any": [None, ["x"], False]}},
        f"({ITEMS_IS_ARRAY} AND "
        f"({has_member(ITEMS, 'mf0')} OR {has_member(ITEMS, 'mf1')} OR {has_member(ITEMS, 'mf2')}))",
        {"mf0": "null", "mf1": '["x"]', "mf2": "false"},
        id="contains-any-null-list-false",
    ),
    pytest.param({"tags": {"$array_contains": []}}, TAGS_IS_ARRAY, {}, id="contains-empty-list"),
    pytest.param({"tags": {"$array_contains_any": []}}, "1 = 0", {}, id="contains-any-empty-list"),
    pytest.param({}, "1 = 1", {}, id="empty-filter"),
    pytest.param({"review": {}}, f"({REVIEW_IS_OBJECT} AND 1 = 1)", {}, id="empty-nested-object"),
    pytest.param(
        {"a": {"b": {"c": 1}}},
        "(JSON_SERIALIZE(JSON_QUERY(r.metadata, '$.\"a\"' RETURNING JSON) RETURNING VARCHAR2(1) TRUNCATE)"
        " = '{' AND "
        "(JSON_SERIALIZE(JSON_QUERY(JSON_QUERY(r.metadata, '$.\"a\"' RETURNING JSON), '$.\"b\"'"
        " RETURNING JSON) RETURNING VARCHAR2(1) TRUNCATE) = '{' AND "
        "JSON_EQUAL(JSON_QUERY(JSON_QUERY(JSON_QUERY(r.metadata, '$.\"a\"' RETURNING JSON), '$.\"b\"' RETURNING JSON),"
        " '$.\"c\"' RETURNING JSON), JSON(:mf0))))",
        {"mf0": "1"},
        id="two-levels",
    ),
    pytest.param(
        {"n": {"$not": {"$not": 1}}},
        f"(CASE WHEN (CASE WHEN JSON_EQUAL({N}, JSON(:mf0)) THEN 0 ELSE 1 END = 1) THEN 0 ELSE 1 END = 1)",
        {"mf0": "1"},
        id="double-not",
    ),
    pytest.param({"e": ""}, f"JSON_EQUAL({E}, JSON(:mf0))", {"mf0": '""'}, id="empty-string-as-json-text"),
    pytest.param(
        {"e": {"$array_contains": ""}},
        f"(JSON_SERIALIZE({E} RETURNING VARCHAR2(1) TRUNCATE) = '[' AND ({has_member(E, 'mf0')}))",
        {"mf0": '""'},
        id="empty-string-member-as-json-text",
    ),
    pytest.param(
        {"review-status": "open"},
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"review-status\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '"open"'},
        id="hyphenated-key",
    ),
]


@pytest.mark.parametrize(("metadata_filter", "expected_sql", "expected_params"), MORE_COMPILED)
def test_other_filter_shapes_compile_to_this_exact_sql(metadata_filter, expected_sql, expected_params):
    sql, params = compile_oracle(metadata_filter)
    assert sql == expected_sql
    assert params == expected_params


def test_bind_names_use_the_prefix_and_count_up_across_one_compilation():
    sql, params = compile_oracle({"a": "x", "b": {"c": 2}, "d": {"$array_contains": ["y", "z"]}}, bind_prefix="r_mf")
    assert params == {"r_mf0": '"x"', "r_mf1": "2", "r_mf2": '"y"', "r_mf3": '"z"'}
    assert re.findall(r":(\w+)", sql) == ["r_mf0", "r_mf1", "r_mf2", "r_mf3"]


# ---------------------------------------------------------------------------------------------------------------
# 2. The semantics of §5.4, row by row, through the evaluator (and the SQLite backend, on the same data).
# ---------------------------------------------------------------------------------------------------------------

# §5.4 derived truth table: (stored metadata, filter id in COMPILED, match?)
TRUTH_TABLE = [
    pytest.param({"tags": ["prod", "urgent"]}, "list", True, id="list-exact"),
    pytest.param({"tags": ["prod", "urgent"]}, "list-reordered", False, id="list-order"),
    pytest.param({"tags": ["prod", "urgent"]}, "list-short", False, id="list-length"),
    pytest.param({"review": {"status": "open", "by": "x"}}, "nested", True, id="nested-containment"),
    pytest.param({"source": "slack", "x": 1}, "scalar-slack", True, id="extra-keys"),
    pytest.param({}, "scalar-slack", False, id="empty-metadata-key-missing"),
    pytest.param(None, "scalar-slack", False, id="no-metadata-key-missing"),
    pytest.param({"tags": ["trip", "urgent"]}, "contains", True, id="array-contains"),
    pytest.param({"tags": ["trip"]}, "contains-all-of", False, id="contains-all-of"),
    pytest.param({"tags": ["trip"]}, "contains-any", True, id="contains-any"),
    pytest.param({"tags": "trip"}, "contains", False, id="contains-non-array"),
    pytest.param({"tags": "archived"}, "not-contains", True, id="not-contains-non-array"),
    pytest.param({}, "not-contains", True, id="not-contains-missing-field"),
    pytest.param({"source": "chat", "tags": ["trip", "archived"]}, "F5", False, id="F5-not-branch-fails"),
    pytest.param({"source": "chat", "tags": ["trip"]}, "F5", True, id="F5-matches"),
    pytest.param({}, "not-scalar", True, id="not-scalar-missing-field"),
    pytest.param({"source": "chat"}, "not-scalar", False, id="not-scalar-equal"),
]

# §5.3 examples, each with a record it selects and one it does not.
EXAMPLES = [
    pytest.param({"source": "chat", "n": 2}, "F1", True, id="F1-match"),
    pytest.param({"source": "email"}, "F1", False, id="F1-other-value"),
    pytest.param({"source": ["chat"]}, "F1", False, id="F1-no-array-unwrapping"),
    pytest.param({"travel": {"need": "transit", "mode": "bus"}}, "F2", True, id="F2-match"),
    pytest.param({"need": "transit"}, "F2", False, id="F2-not-nested"),
    pytest.param({"travel": [{"need": "transit"}]}, "F2", False, id="F2-no-array-unwrapping"),
    pytest.param({"tags": ["trip", "urgent"]}, "F3", True, id="F3-match"),
    pytest.param({"tags": ["trip", "urgent", "x"]}, "F3", False, id="F3-superset-list"),
    pytest.param({"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"], "x": 1}, "F4", True),
    pytest.param({"source": "chat", "travel": {"need": "transit"}, "tags": ["urgent", "trip"]}, "F4", False),
    pytest.param({"source": "chat", "tags": ["urgent", "trip", "x"]}, "F5", True, id="F5-match-any-position"),
    pytest.param({"source": "slack", "tags": ["trip"]}, "F5", False, id="F5-source-fails"),
    pytest.param({"source": "slack"}, "F6", True, id="F6-match"),
    pytest.param({"source": "Slack"}, "F6", False, id="F6-case-sensitive"),
    pytest.param({"review": {"status": "open"}}, "F7", True, id="F7-match"),
    pytest.param({"review": {"status": "closed"}}, "F7", False, id="F7-other-value"),
    pytest.param({"tags": ["prod", "urgent"]}, "F8", True, id="F8-match"),
    pytest.param({"tags": ["urgent", "prod"]}, "F8", False, id="F8-order"),
]


@pytest.mark.parametrize(("stored", "filter_id", "expected"), TRUTH_TABLE + EXAMPLES)
def test_each_truth_table_row_and_example_decides_as_the_spec_says(stored, filter_id, expected, sqlite_selects):
    metadata_filter, sql, params = COMPILED[filter_id]
    assert OracleConditionEvaluator(sql, params).matches(stored) is expected
    assert oracle_matches(metadata_filter, stored) is expected
    assert sqlite_selects(metadata_filter, stored) is expected


# Where lax mode would unwrap an array or wrap a scalar, had the SQL taken a longer path or iterated an unchecked
# value: (stored, filter, match?). Each is decided the same way by SQLite.
LAX_TRAPS = [
    pytest.param({"tags": ["a"]}, {"tags": "a"}, False, id="scalar-vs-one-element-array"),
    pytest.param({"tags": "a"}, {"tags": "a"}, True, id="scalar-vs-scalar"),
    pytest.param({"tags": [["a"]]}, {"tags": ["a"]}, False, id="list-vs-nested-list"),
    pytest.param({"review": [{"status": "open"}]}, {"review": {"status": "open"}}, False, id="object-in-array"),
    pytest.param({"review": [{"status": "open"}, {"status": "open"}]}, {"review": {"status": "open"}}, False),
    pytest.param({"review": {"status": ["open"]}}, {"review": {"status": "open"}}, False, id="nested-array"),
    pytest.param({"review": '{"status": "open"}'}, {"review": {"status": "open"}}, False, id="object-like-string"),
    pytest.param({"a": [{"b": {"c": 1}}]}, {"a": {"b": {"c": 1}}}, False, id="two-levels-array-at-top"),
    pytest.param({"a": {"b": [{"c": 1}]}}, {"a": {"b": {"c": 1}}}, False, id="two-levels-array-below"),
    pytest.param({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1}}}, True, id="two-levels"),
    pytest.param({"tags": "a"}, {"tags": {"$array_contains": "a"}}, False, id="contains-on-scalar"),
    pytest.param({"tags": [["a"]]}, {"tags": {"$array_contains": "a"}}, False, id="contains-on-nested-array"),
    pytest.param({"tags": {"k": "a"}}, {"tags": {"$array_contains": "a"}}, False, id="contains-on-object"),
    pytest.param({"tags": {"k": "a"}}, {"tags": {"$array_contains": {"k": "a"}}}, False, id="contains-object-on-it"),
    pytest.param({"tags": '["a"]'}, {"tags": {"$array_contains": "a"}}, False, id="contains-on-array-like-string"),
    pytest.param({"tags": ["a"]}, {"tags": {"$array_contains": "a"}}, True, id="contains-on-array"),
    pytest.param({"tags": [["a"]]}, {"tags": {"$array_contains": [["a"]]}}, True, id="contains-a-list"),
    pytest.param({"tags": "a"}, {"tags": {"$array_contains_any": ["a", "b"]}}, False, id="contains-any-on-scalar"),
    pytest.param({"tags": "a"}, {"tags": {"$array_contains": []}}, False, id="contains-nothing-on-scalar"),
    pytest.param({"tags": "a"}, {"tags": {"$not": {"$array_contains": "a"}}}, True, id="not-contains-on-scalar"),
    pytest.param({"tags": [["a"]]}, {"tags": {"$not": {"$array_contains": "a"}}}, True, id="not-contains-nested"),
    pytest.param({"review": [{"status": "open"}]}, {"review": {"$not": {"status": "open"}}}, True, id="not-object"),
]


@pytest.mark.parametrize(("stored", "metadata_filter", "expected"), LAX_TRAPS)
def test_one_step_paths_on_checked_values_keep_lax_mode_from_unwrapping_or_wrapping(
    stored, metadata_filter, expected, sqlite_selects
):
    assert oracle_matches(metadata_filter, stored) is expected
    assert sqlite_selects(metadata_filter, stored) is expected


def _json_arguments(sql: str, function: str) -> list[str]:
    """The SQL text of the first argument of every call of `function` in `sql` (string literals skipped)."""
    found = []
    for start in (m.end() for m in re.finditer(rf"\b{function}\(", sql)):
        depth, position, quoted = 0, start, False
        while True:
            char = sql[position]
            if char == "'":
                quoted = not quoted
            elif not quoted and char == "(":
                depth += 1
            elif not quoted and char == ")":
                depth -= 1
            elif not quoted and char == "," and depth == 0:
                break
            position += 1
        found.append(sql[start:position])
    return found


def test_every_path_is_one_step_taken_on_a_value_the_condition_checks_to_be_an_object():
    """The design, read off the SQL of every filter of the cross-check: one quoted step per JSON_QUERY, no path
    mode, each JSON_QUERY below the document paired with an object check of its input, each JSON_TABLE with an
    array check of its input."""
    for metadata_filter in CROSS_CHECK:
        sql, _ = compile_oracle(metadata_filter)
        for word in ("strict", "lax", "PASSING", "JSON_EXISTS", "JSON_VALUE", "NOT ", "WRAPPER", "ON ERROR"):
            assert word not in sql, (word, metadata_filter)
        paths = re.findall(r"'(\$[^']*)'", sql)
        assert all(re.fullmatch(r'\$\."[A-Za-z0-9_-]+"|\$\[\*\]|\$', p) for p in paths), paths
        for value in _json_arguments(sql, "JSON_QUERY"):
            if value != DOC:
                assert f"JSON_SERIALIZE({value} RETURNING VARCHAR2(1) TRUNCATE) = '{{'" in sql, value
        for value in _json_arguments(sql, "JSON_TABLE"):
            assert f"JSON_SERIALIZE({value} RETURNING VARCHAR2(1) TRUNCATE) = '['" in sql, value


# The evaluator itself, on the documented rules it encodes (so a mistake in the oracle is caught too).
def test_evaluator_lax_member_step_unwraps_arrays_and_gives_null_for_none_or_several():
    nested = OracleConditionEvaluator(
        "JSON_EQUAL(JSON_QUERY(JSON_QUERY(r.metadata, '$.\"review\"' RETURNING JSON), '$.\"status\"' RETURNING JSON),"
        " JSON(:b))",
        {"b": '"open"'},
    )
    assert nested.evaluate({"review": {"status": "open"}}) is True
    assert nested.evaluate({"review": [{"status": "open"}]}) is True  # unwrapped: why the object check is needed
    assert nested.evaluate({"review": [{"status": "open"}, 1, ["x"]]}) is True  # non-objects give nothing
    assert nested.evaluate({"review": [{"status": "open"}, {"status": "open"}]}) is None  # several: NULL ON ERROR
    assert nested.evaluate({"review": [[{"status": "open"}]]}) is None  # the standard unwraps one level only
    assert nested.evaluate({"review": "open"}) is None  # a step on a scalar gives nothing: NULL ON EMPTY
    assert nested.evaluate({"review": {}}) is None
    assert nested.evaluate({}) is None  # JSON_QUERY of NULL is NULL
    assert nested.evaluate(None) is None
    top = OracleConditionEvaluator(
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"tags\"' RETURNING JSON), JSON(:b))", {"b": '"a"'}
    )
    assert top.evaluate({"tags": "a"}) is True
    assert top.evaluate({"tags": ["a"]}) is False  # the value of a step is not unwrapped: ["a"] is not "a"


def test_evaluator_json_table_wraps_a_non_array_as_one_row():
    member = OracleConditionEvaluator(f"{has_member(TAGS, 'b')}", {"b": '"a"'})
    assert member.evaluate({"tags": ["x", "a"]}) is True
    assert member.evaluate({"tags": "a"}) is True  # lax wrapping: why the array check is needed
    assert member.evaluate({"tags": [["a"]]}) is False  # one row, ["a"], which is not "a"
    assert member.evaluate({"tags": {"k": "a"}}) is False  # one row, the object
    assert member.evaluate({"tags": []}) is False
    assert member.evaluate({}) is False  # no rows: EXISTS is FALSE, never UNKNOWN
    assert member.evaluate(None) is False


def test_evaluator_json_equal_compares_json_values_and_is_unknown_with_null():
    equal = OracleConditionEvaluator(
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"a\"' RETURNING JSON), JSON(:b))", {"b": '[{"x": 1, "y": 2}]'}
    )
    assert equal.evaluate({"a": [{"y": 2, "x": 1.0}]}) is True  # member order ignored, 1 == 1.0
    assert equal.evaluate({"a": [{"y": 2, "x": True}]}) is False  # true is not 1
    assert equal.evaluate({"a": [{"x": 1}]}) is False
    assert equal.evaluate({"a": [{"x": 1, "y": 2}, {"x": 1, "y": 2}]}) is False
    assert equal.evaluate({}) is None  # JSON_QUERY gives NULL, JSON_EQUAL(NULL, …) is UNKNOWN
    assert equal.evaluate(None) is None
    for text, stored, expected in (
        ('"1"', 1, False),
        ("1", "1", False),
        ("1", True, False),
        ("0", False, False),
        ("null", None, True),  # JSON null is a value, not SQL NULL
        ("null", "", False),
        ('""', "", True),
        ('"A"', "a", False),
    ):
        scalar = OracleConditionEvaluator(
            "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"a\"' RETURNING JSON), JSON(:b))", {"b": text}
        )
        assert scalar.evaluate({"a": stored}) is expected, (text, stored)
    assert OracleConditionEvaluator("JSON_EQUAL(r.metadata, JSON(:b))", {"b": ""}).evaluate({}) is None  # '' is NULL
    lenient = OracleConditionEvaluator("JSON_EQUAL(r.metadata, JSON(:b))", {"b": "{}"}, json_equal_on_null=False)
    assert lenient.evaluate(None) is False


def test_evaluator_type_check_reads_the_first_character_of_the_compact_serialisation():
    is_object = OracleConditionEvaluator(REVIEW_IS_OBJECT, {})
    is_array = OracleConditionEvaluator(f"JSON_SERIALIZE({REVIEW} RETURNING VARCHAR2(1) TRUNCATE) = '['", {})
    for stored, object_, array in (
        ({"review": {}}, True, False),
        ({"review": {"a": [1]}}, True, False),
        ({"review": []}, False, True),
        ({"review": [{"a": 1}]}, False, True),
        ({"review": "{not an object}"}, False, False),  # serialised with its quotes: first character '"'
        ({"review": "[1]"}, False, False),
        ({"review": None}, False, False),
        ({"review": 0}, False, False),
        ({"review": True}, False, False),
        ({}, None, None),  # SUBSTR of NULL is NULL: UNKNOWN
        (None, None, None),
    ):
        assert is_object.evaluate(stored) is object_, stored
        assert is_array.evaluate(stored) is array, stored


def test_evaluator_case_counts_unknown_as_no_match_where_not_would_keep_it_unknown():
    positive = f"JSON_EQUAL({SOURCE}, JSON(:b))"
    case = OracleConditionEvaluator(f"(CASE WHEN {positive} THEN 0 ELSE 1 END = 1)", {"b": '"chat"'})
    negation = OracleConditionEvaluator(f"NOT ({positive})", {"b": '"chat"'})
    assert [case.evaluate(d) for d in ({"source": "chat"}, {"source": "x"}, {}, None)] == [False, True, True, True]
    assert [negation.evaluate(d) for d in ({"source": "chat"}, {"source": "x"}, {}, None)] == [False, True, None, None]


def test_evaluator_rejects_sql_outside_the_compilers_subset():
    for sql in (
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"a\"' RETURNING JSON), JSON(:b))",  # a path mode
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'lax $.\"a\"' RETURNING JSON), JSON(:b))",
        'JSON_EQUAL(JSON_QUERY(r.metadata, \'$."a"."b"\' RETURNING JSON), JSON(:b))',  # two steps
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.a' RETURNING JSON), JSON(:b))",  # an unquoted step
        "JSON_EQUAL(JSON_QUERY(r.metadata, '$.\"a\"'), JSON(:b))",  # no RETURNING JSON
        "JSON_EQUAL(JSON_QUERY(t.metadata, '$.\"a\"' RETURNING JSON), JSON(:b))",  # another column
        "JSON_EQUAL(JSON_VALUE(r.metadata, '$.\"a\"'), JSON(:b))",
        'JSON_EXISTS(r.metadata, \'$."a"?(@ == $v)\' PASSING :b AS "v")',
        "JSON_EQUAL(r.metadata, :b)",  # a bind compared without JSON()
        "JSON_SERIALIZE(r.metadata RETURNING VARCHAR2(1) TRUNCATE) = '\"'",  # only objects and arrays
        "JSON_SERIALIZE(r.metadata RETURNING VARCHAR2(2) TRUNCATE) = '{'",  # more than the first character
        "JSON_SERIALIZE(r.metadata RETURNING VARCHAR2(1)) = '{'",  # without TRUNCATE: an error past 1 byte
        "DBMS_LOB.SUBSTR(JSON_SERIALIZE(r.metadata RETURNING CLOB), 1, 1) = '{'",  # the old, costlier form
        "EXISTS (SELECT 1 FROM JSON_TABLE(r.metadata, '$.\"a\"[*]' COLUMNS (item JSON PATH '$')) jt "
        "WHERE JSON_EQUAL(jt.item, JSON(:b)))",
        "JSON_EQUAL(jt.item, JSON(:b))",  # jt.item outside its subquery
    ):
        with pytest.raises(AssertionError):
            OracleConditionEvaluator(sql, {"b": '"x"'}).evaluate({"a": "x"})


# ---------------------------------------------------------------------------------------------------------------
# Cross-check: the evaluator on Oracle's SQL and SQLiteMemoryStore.list select the same records.
# ---------------------------------------------------------------------------------------------------------------

CORPUS: list[dict | None] = [
    None,
    {},
    {"tags": ["prod", "urgent"]},
    {"tags": ["urgent", "prod"]},
    {"tags": ["prod"]},
    {"tags": []},
    {"tags": "trip"},
    {"tags": "archived"},
    {"tags": ["trip", "urgent"]},
    {"tags": ["trip"]},
    {"tags": ["trip", "archived"]},
    {"tags": [["trip"]]},
    {"tags": {"0": "trip"}},
    {"tags": '["trip"]'},
    {"tags": None},
    {"review": {"status": "open", "by": "x"}},
    {"review": {"status": "open"}},
    {"review": {"status": "closed"}},
    {"review": "open"},
    {"review": ["open"]},
    {"review": {"status": ["open"]}},
    {"review": {}},
    {"review": []},
    {"review": [{"status": "open"}]},
    {"review": [{"status": "open"}, {"status": "open"}]},
    {"review": [{"status": "open"}, "open"]},
    {"review": '{"status": "open"}'},
    {"source": "slack", "x": 1},
    {"source": "slack"},
    {"source": "Slack"},
    {"source": "chat"},
    {"source": "chat", "tags": ["trip"]},
    {"source": "chat", "tags": ["trip", "archived"]},
    {"source": "chat", "tags": ["urgent", "trip", "x"]},
    {"source": ["chat"]},
    {"source": [["chat"]]},
    {"source": None},
    {"source": ""},
    {"source": " chat"},
    {"n": 1},
    {"n": 1.0},
    {"n": 1.5},
    {"n": True},
    {"n": False},
    {"n": 0},
    {"n": "1"},
    {"n": None},
    {"n": [1]},
    {"n": [1.0]},
    {"n": [1.0, True]},
    {"n": [True]},
    {"n": [0, False]},
    {"n": 2**63 - 1},
    {"n": -7},
    {"travel": {"need": "transit", "mode": "bus"}},
    {"travel": {"need": "hotel"}},
    {"need": "transit"},
    {"travel": {"need": {"need": "transit"}}},
    {"travel": [{"need": "transit"}]},
    {"items": [{"a": 1, "b": 2}, {"c": 3}]},
    {"items": [{"b": 2, "a": 1}, {"c": 3}]},
    {"items": [{"c": 3}, {"a": 1, "b": 2}]},
    {"items": [{"a": 1}, {"c": 3}]},
    {"items": [[1, 2], [3]]},
    {"items": [{"a": [1, {"b": None}]}]},
    {"items": {"a": 1}},
    {"mixed": ["a", 1, True, None, 1.5, {"k": "v"}, ["x"], ""]},
    {"mixed": [False, 0, "0", "false"]},
    {"mixed": "a"},
    {"mixed": None},
    {"a": {"b": {"c": 1, "d": 2}, "e": 3}},
    {"a": {"b": {"c": 2}}},
    {"a": {"b": 1}},
    {"a.b": 1},
    {"a": {"b": {"c": [1, 2]}}},
    {"a": [{"b": {"c": 1}}]},
    {"a": {"b": [{"c": 1}]}},
    {"review-status": "open"},
    {"review_status": "open"},
    {"s": "x' OR '1'='1"},
    {"s": 'he said "hi" \\ $v @ -- ?(x) && ||'},
    {"s": "ключ значение"},
    {"s": "line\nbreak"},
    {"s": ["x' OR '1'='1", {'it\'s "k"': "x' OR '1'='1"}]},
    {"e": ""},
    {"e": [""]},
    {"e": []},
    {"e": {}},
    {"e": None},
    {"e": " "},
    {"e": ["", "x"]},
    {"e": [[""]]},
]

HOSTILE = ["x' OR '1'='1", 'he said "hi" \\ $v @ -- ?(x) && ||', "ключ значение", "line\nbreak"]

CROSS_CHECK = [
    # scalars of each JSON type; true is not 1, 1 is 1.0, "1" is not 1, null needs the key
    {"source": "chat"},
    {"source": "slack"},
    {"n": 1},
    {"n": 1.0},
    {"n": 0},
    {"n": -7},
    {"n": 1.5},
    {"n": 2**63 - 1},
    {"n": "1"},
    {"n": True},
    {"n": False},
    {"n": None},
    {"source": None},
    {"tags": None},
    {"tags": "trip"},
    {"review": "open"},
    # the empty string (a zero-length VARCHAR2 is NULL in Oracle)
    {"source": ""},
    {"e": ""},
    {"e": [""]},
    {"e": {"$array_contains": ""}},
    {"mixed": {"$array_contains": ""}},
    {"e": {"$not": ""}},
    {"e": {"$array_contains_any": ["", "zzz"]}},
    # hostile values are values
    *({"s": v} for v in HOSTILE),
    *({"s": {"$array_contains": v}} for v in HOSTILE),
    {"s": [HOSTILE[0], {'it\'s "k"': HOSTILE[0]}]},
    {"s": {"$array_contains": {'it\'s "k"': HOSTILE[0]}}},
    # exact lists: order, length, nested objects (exact inside lists), lists of lists
    {"tags": ["prod", "urgent"]},
    {"tags": ["prod"]},
    {"tags": ["trip"]},
    {"tags": []},
    {"n": [1]},
    {"n": [True]},
    {"n": [1.0, True]},
    {"items": [{"a": 1, "b": 2}, {"c": 3}]},
    {"items": [{"b": 2, "a": 1}, {"c": 3}]},
    {"items": [{"a": 1}, {"c": 3}]},
    {"items": [[1, 2], [3]]},
    {"items": [{"a": [1, {"b": None}]}]},
    {"review": ["open"]},
    {"source": ["chat"]},
    # nested objects: containment, empty object, wrong types, arrays of objects, two levels, lists inside
    {"review": {"status": "open"}},
    {"review": {}},
    {"review": {"status": ["open"]}},
    {"travel": {"need": "transit"}},
    {"travel": {"need": {"need": "transit"}}},
    {"a": {"b": {"c": 1}}},
    {"a": {"b": 1}},
    {"a": {"b": {"c": [1, 2]}}},
    {"items": {"a": 1}},
    # $array_contains with scalars of each type, lists (all-of), objects and lists as members, empty list
    {"tags": {"$array_contains": "trip"}},
    {"tags": {"$array_contains": ["trip", "urgent"]}},
    {"tags": {"$array_contains": ["urgent", "trip"]}},
    {"tags": {"$array_contains": []}},
    {"tags": {"$array_contains": [["trip"]]}},
    {"source": {"$array_contains": "chat"}},
    {"review": {"$array_contains": {"status": "open"}}},
    {"mixed": {"$array_contains": "a"}},
    {"mixed": {"$array_contains": 1}},
    {"mixed": {"$array_contains": 1.5}},
    {"mixed": {"$array_contains": True}},
    {"mixed": {"$array_contains": False}},
    {"mixed": {"$array_contains": 0}},
    {"mixed": {"$array_contains": "0"}},
    {"mixed": {"$array_contains": None}},
    {"mixed": {"$array_contains": {"k": "v"}}},
    {"mixed": {"$array_contains": [["x"]]}},
    {"mixed": {"$array_contains": ["x"]}},
    {"n": {"$array_contains": 1}},
    {"n": {"$array_contains": True}},
    {"items": {"$array_contains": {"a": 1}}},
    {"items": {"$array_contains": {"b": 2, "a": 1}}},
    {"items": {"$array_contains": [[1, 2]]}},
    {"items": {"$array_contains": [1, 2]}},
    # $array_contains_any, including the empty list and mixed types
    {"tags": {"$array_contains_any": ["trip", "urgent"]}},
    {"tags": {"$array_contains_any": []}},
    {"tags": {"$array_contains_any": ["nope"]}},
    {"mixed": {"$array_contains_any": [0, "a"]}},
    {"mixed": {"$array_contains_any": [{"k": "v"}, "zzz"]}},
    {"mixed": {"$array_contains_any": [None]}},
    {"n": {"$array_contains_any": [0, 7]}},
    # $not of scalars, lists, objects, membership, missing keys, empty operands, double negation
    {"tags": {"$not": ["prod", "urgent"]}},
    {"review": {"$not": {"status": "open"}}},
    {"missing": {"$not": "x"}},
    {"source": {"$not": None}},
    {"n": {"$not": 1}},
    {"n": {"$not": True}},
    {"tags": {"$not": "trip"}},
    {"tags": {"$not": {"$array_contains": "trip"}}},
    {"tags": {"$not": {"$array_contains_any": []}}},
    {"tags": {"$not": {"$array_contains": []}}},
    {"items": {"$not": {"$array_contains": {"c": 3}}}},
    {"tags": {"$not": {"$not": {"$array_contains": "trip"}}}},
    {"a": {"b": {"$not": {"c": 1}}}},
    {"a": {"$not": {"b": {"c": 1}}}},
    {"travel": {"need": {"$not": "transit"}}},
    # several operators in one dict, several keys
    {"tags": {"$array_contains": "trip", "$array_contains_any": ["archived", "x"]}},
    {"tags": {"$array_contains": "trip", "$not": {"$array_contains": "archived"}}},
    {"tags": {"$array_contains_any": ["urgent", "x"], "$not": ["trip", "urgent"]}},
    F5,
    {"source": "chat", "tags": ["trip"]},
    {"source": "slack", "x": 1},
    {"review-status": "open"},
    {"a": {"b": {"c": 1}}, "n": {"$not": 1}},
    {},
]


@pytest.fixture(scope="module")
def sqlite_corpus():
    """One SQLite store holding CORPUS, record i being CORPUS[i]; yields (store, ids)."""
    store = SQLiteMemoryStore(":memory:", embedder=HashingEmbedder(8), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    ids = store.add([f"record {i}" for i in range(len(CORPUS))], record_type="memory", metadata=CORPUS)
    yield store, ids
    store.close()


def canonical(document: Any) -> str:
    return json.dumps(document, sort_keys=True)


@pytest.fixture
def sqlite_selects(sqlite_corpus):
    """`sqlite_selects(filter, stored) -> bool`, answered by SQLiteMemoryStore.list over the corpus."""
    store, ids = sqlite_corpus
    positions = {canonical(doc): i for i, doc in reversed(list(enumerate(CORPUS)))}

    def selects(metadata_filter: Any, stored: dict | None) -> bool:
        if canonical(stored) not in positions:
            single = SQLiteMemoryStore(
                ":memory:", embedder=HashingEmbedder(8), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY
            )
            [record_id] = single.add(["one"], record_type="memory", metadata=[stored])
            found = [r.id for r in single.list("memory", metadata_filter=metadata_filter)]
            single.close()
            return found == [record_id]
        record_id = ids[positions[canonical(stored)]]
        return record_id in {r.id for r in store.list("memory", metadata_filter=metadata_filter, limit=None)}

    return selects


def sqlite_selection(store, ids, metadata_filter) -> list[int]:
    found = {r.id for r in store.list("memory", metadata_filter=metadata_filter, limit=None)}
    return [i for i, record_id in enumerate(ids) if record_id in found]


def oracle_selection(metadata_filter, json_equal_on_null: bool | None = None) -> list[int]:
    sql, params = compile_oracle(metadata_filter)
    evaluator = OracleConditionEvaluator(sql, params, json_equal_on_null=json_equal_on_null)
    return [i for i, doc in enumerate(CORPUS) if evaluator.matches(doc)]


@pytest.mark.parametrize("metadata_filter", CROSS_CHECK, ids=[canonical(f)[:60] for f in CROSS_CHECK])
def test_oracle_sql_selects_the_same_records_as_sqlite(sqlite_corpus, metadata_filter):
    store, ids = sqlite_corpus
    expected = sqlite_selection(store, ids, metadata_filter)
    selected = oracle_selection(metadata_filter)
    assert selected == expected, (
        f"only Oracle: {[CORPUS[i] for i in set(selected) - set(expected)]}, "
        f"only SQLite: {[CORPUS[i] for i in set(expected) - set(selected)]}"
    )


def test_no_decision_depends_on_json_equal_of_null_being_unknown_rather_than_false():
    """JSON_EQUAL's result for a NULL operand is undocumented; every comparison sits under AND, OR, EXISTS or CASE,
    where FALSE and UNKNOWN end the same way, so either reading selects the same records."""
    for metadata_filter in CROSS_CHECK:
        assert oracle_selection(metadata_filter, json_equal_on_null=False) == oracle_selection(metadata_filter)


@pytest.mark.parametrize("metadata_filter", CROSS_CHECK, ids=[canonical(f)[:60] for f in CROSS_CHECK])
def test_every_bind_is_non_empty_json_text_so_that_none_reads_as_null_in_oracle(metadata_filter):
    sql, params = compile_oracle(metadata_filter)
    for name, text in params.items():
        assert type(text) is str and text != "", (name, text)
        json.loads(text)
        assert sql.count(f"JSON(:{name})") == 1  # each bind is parsed by the JSON constructor, once


def test_the_cross_check_discriminates(sqlite_corpus):
    """The filters above split the corpus in many different ways (so agreement is not trivial)."""
    store, ids = sqlite_corpus
    selections = [tuple(sqlite_selection(store, ids, f)) for f in CROSS_CHECK]
    assert len(set(selections)) >= 80
    assert () in selections and tuple(range(len(CORPUS))) in selections


# ---------------------------------------------------------------------------------------------------------------
# 3. Keys are validated and quoted; values only ever travel as binds.
# ---------------------------------------------------------------------------------------------------------------

BAD_KEYS = [
    pytest.param("it's", id="single-quote"),
    pytest.param('a"b', id="double-quote"),
    pytest.param("back\\slash", id="backslash"),
    pytest.param("$v", id="dollar-first"),
    pytest.param("x$y", id="dollar-inside"),
    pytest.param("@", id="at"),
    pytest.param("a@b", id="at-inside"),
    pytest.param("two words", id="space"),
    pytest.param(" a", id="leading-space"),
    pytest.param("line\nbreak", id="newline"),
    pytest.param("trailing\n", id="trailing-newline"),
    pytest.param("tab\t", id="tab"),
    pytest.param("a--b", id="double-hyphen"),
    pytest.param("--", id="sql-comment"),
    pytest.param("-a", id="leading-hyphen"),
    pytest.param("a-", id="trailing-hyphen"),
    pytest.param(".", id="dot"),
    pytest.param("a.b", id="dotted"),
    pytest.param("[0]", id="array-step"),
    pytest.param("*", id="wildcard"),
    pytest.param("a)", id="paren"),
    pytest.param("a?(@)", id="filter-syntax"),
    pytest.param("ключ", id="cyrillic"),
    pytest.param("été", id="accented"),
    pytest.param("a\u0663", id="arabic-indic-digit"),
    pytest.param("ｆｕｌｌ", id="fullwidth"),  # noqa: RUF001 (fullwidth letters are the point)
    pytest.param("a\x00", id="nul"),
    pytest.param("k" * 129, id="129-characters"),
]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_an_oracle_path_cannot_name_safely_is_a_value_error_naming_it(key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        json_path_step(key)
    for metadata_filter in (
        {key: 1},
        {"ok": {key: 1}},
        {"ok": {"$not": {key: "x"}}},
        {"ok": {"$not": {"$not": {"deeper": {key: None}}}}},
    ):
        with pytest.raises(ValueError, match=re.escape(repr(key))):
            compile_oracle(metadata_filter)


def test_an_empty_key_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="''"):
        json_path_step("")
    with pytest.raises(ValueError, match="''"):
        compile_oracle({"ok": {"": 1}})


@pytest.mark.parametrize("key", ["review-status", "a-b-c", "_private", "A1", "x_1-y_2", "k" * 128, "ALL_CAPS", "a1-2b"])
def test_plain_and_hyphenated_keys_are_accepted_and_quoted(key):
    assert json_path_step(key) == f'."{key}"'
    sql, params = compile_oracle({key: {key: "v"}})
    outer = f"JSON_QUERY(r.metadata, '$.\"{key}\"' RETURNING JSON)"
    assert f"JSON_SERIALIZE({outer} RETURNING VARCHAR2(1) TRUNCATE) = '{{'" in sql
    assert f"JSON_EQUAL(JSON_QUERY({outer}, '$.\"{key}\"' RETURNING JSON), JSON(:mf0))" in sql
    assert params == {"mf0": '"v"'}
    assert oracle_matches({key: {key: "v"}}, {key: {key: "v", "x": 1}})
    assert not oracle_matches({key: {key: "v"}}, {key + "x": {key: "v"}})
    assert not oracle_matches({key: {key: "v"}}, {key: [{key: "v"}]})


@pytest.mark.parametrize("value", [*HOSTILE, "') OR 1=1 --", '"v") OR ("', "$w @.x", "\\u0027", ""])
def test_hostile_values_appear_only_in_binds_and_still_match_themselves(value):
    for metadata_filter, selected, rejected in (
        ({"s": value}, {"s": value}, {"s": value + "!"}),
        ({"s": value}, {"s": value}, {"s": [value]}),
        ({"s": {"$array_contains": value}}, {"s": ["other", value]}, {"s": value}),
        ({"s": {"$array_contains_any": ["zzz", value]}}, {"s": [value]}, {"s": [value + "!"]}),
        ({"s": {"$not": value}}, {"s": value + "!"}, {"s": value}),
        ({"s": [value, {"k": value}]}, {"s": [value, {"k": value}]}, {"s": [value, {"k": value, "x": 1}]}),
        ({"s": {"$array_contains": {value: value}}}, {"s": [{value: value}]}, {"s": [{value: value + "!"}]}),
        ({"n": {"m": value}}, {"n": {"m": value}}, {"n": {"m": [value]}}),
    ):
        sql, params = compile_oracle(metadata_filter)
        if value:
            assert value not in sql
        assert json.dumps(value) not in sql
        assert any(json.dumps(value) in p for p in params.values())
        evaluator = OracleConditionEvaluator(sql, params)
        assert evaluator.matches(selected), (metadata_filter, selected)
        assert not evaluator.matches(rejected), (metadata_filter, rejected)


def test_keys_inside_values_are_values_and_are_not_validated():
    odd = {'it\'s "odd" $ @ --\n': [1]}
    sql, params = compile_oracle({"items": [odd], "more": {"$array_contains": odd}})
    assert "odd" not in sql
    assert params == {"mf0": json.dumps([odd]), "mf1": json.dumps(odd)}
    assert oracle_matches({"items": [odd], "more": {"$array_contains": odd}}, {"items": [odd], "more": [odd, 2]})
