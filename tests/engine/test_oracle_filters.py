"""OracleFilterCompiler without a server: exact SQL, key validation, and semantics checked by a test oracle.

No Oracle database runs here, so the SQL/JSON conditions the compiler emits are checked three ways:

1. the exact SQL text and binds of every filter of API_SPEC §5.4 and §5.3 (F-1 … F-8), so that any change to
   the generated SQL fails a test and has to be reviewed;
2. a small evaluator (`OracleConditionEvaluator`) that interprets exactly the SQL/JSON subset the compiler emits,
   following Oracle's documented semantics (cited below), runs every §5.4 row; and
3. the same evaluator is cross-checked against the SQLite backend (`SQLiteMemoryStore.list`) over one corpus of
   stored metadata and a broad set of filters, so that both backends select the same records.

Oracle semantics the evaluator follows (Oracle Database 23ai JSON Developer's Guide and SQL Language Reference):

- JSON_EXISTS and JSON_EQUAL default to FALSE ON ERROR ("Error Clause for SQL Functions and Conditions");
  JSON_EXISTS on a NULL document is UNKNOWN ("JSON_EXISTS Condition"); JSON_QUERY and JSON_TABLE default to
  NULL ON ERROR / NULL ON EMPTY, and may return a single scalar when `compatible` >= 20 ("Wrapper Clause").
- A `strict` path neither wraps nor unwraps arrays and a step that cannot navigate the data (a missing member,
  `[*]` on a non-array) is an error, handled by the ON ERROR clause (SQL/JSON standard path modes).
- Item methods: if an item-method conversion fails, e.g. the data has the wrong type, "the path cannot be
  matched ... for json_exists ... the nonmatch just serves as a filter" ("SQL/JSON Path Expression Item
  Methods"). `stringOnly()`, `numberOnly()`, `booleanOnly()` apply only to strings, numbers and booleans
  (ORA-40799 for numberOnly() on a boolean); JSON string, number, null, object and array are "mutually exclusive
  and incomparable" ("Types in Filter-Condition Comparisons").
- JSON_EQUAL ignores object member order; array order and string case are significant.
- SQL: Oracle treats a zero-length character value as NULL, so an empty-string bind arrives as NULL; a condition
  on NULL is UNKNOWN, and CASE WHEN takes only TRUE into its THEN branch.
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


class PathError(Exception):
    """A strict-mode path step that cannot navigate the data (handled by the function's ON ERROR clause)."""


class ItemMethodError(Exception):
    """An item method applied to data of the wrong type (the item then does not pass the filter)."""


def json_kind(value: Any) -> str:
    """The JSON-language type name, as the type() item method reports it for JSON text stored in a JSON column."""
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


_STEP = re.compile(r'\."(?P<key>[^"\\]*)"|(?P<all>\[\*\])|\?\((?P<filter>.*)\)$')
_PREDICATE = re.compile(
    r'^@\.(?P<method>type|stringOnly|numberOnly|booleanOnly)\(\) == (?P<operand>"[^"]*"|\$v|true|false)$'
)


def _apply_method(method: str, item: Any) -> Any:
    if method == "type":
        return json_kind(item)
    wanted = {"stringOnly": "string", "numberOnly": "number", "booleanOnly": "boolean"}[method]
    if json_kind(item) != wanted:
        raise ItemMethodError(f"{method}() on {json_kind(item)}")
    return item


def _predicate(text: str, item: Any, variables: dict[str, Any]) -> bool | None:
    """One `@.method() == operand` comparison on one item: TRUE, FALSE or UNKNOWN (an error in an operand)."""
    match = _PREDICATE.match(text)
    assert match, f"filter predicate outside the evaluated subset: {text!r}"
    operand = match["operand"]
    right = variables["v"] if operand == "$v" else json.loads(operand)
    if right is NULL:
        return None
    try:
        left = _apply_method(match["method"], item)
    except ItemMethodError:
        return None
    return json_kind(left) == json_kind(right) and json_equal(left, right)


def eval_path(doc: Any, path: str, variables: dict[str, Any]) -> list[Any]:
    """The sequence of items a `strict $...` path selects; PathError where strict mode reports an error."""
    assert path.startswith("strict $"), f"only strict absolute paths are emitted: {path!r}"
    rest, items = path[len("strict $") :], [doc]
    while rest:
        step = _STEP.match(rest)
        assert step, f"path step outside the evaluated subset: {rest!r}"
        rest = rest[step.end() :]
        if step["key"] is not None:
            if not all(isinstance(item, dict) and step["key"] in item for item in items):
                raise PathError(f"no member {step['key']!r}")
            items = [item[step["key"]] for item in items]
        elif step["all"]:
            if not all(isinstance(item, list) for item in items):
                raise PathError("[*] on a non-array")
            items = [element for item in items for element in item]
        else:
            predicates = step["filter"].split(" && ")
            items = [item for item in items if and3([_predicate(p, item, variables) for p in predicates]) is True]
    return items


def sql_bind(value: Any) -> Any:
    """A Python bind value as the server sees it: a zero-length string is NULL in Oracle."""
    return NULL if value is None or value == "" else value


_SQL_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<bind>:[A-Za-z_]\w*)|(?P<quoted>\"[^\"]*\")"
    r"|(?P<word>[A-Za-z_][\w.]*)|(?P<number>\d+)|(?P<punct>[(),=]))",
    re.ASCII,
)


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

    The grammar is exactly what OracleFilterCompiler emits; anything else is an AssertionError, so a
    change in the generated SQL shows up here too. Results are SQL truth values: True, False or None (UNKNOWN).
    """

    def __init__(self, sql: str, params: dict[str, Any], document_sql: str = DOC) -> None:
        self.tokens = tokenize(sql)
        self.params = params
        self.document_sql = document_sql
        self.used_binds: set[str] = set()

    def evaluate(self, metadata: dict | None) -> bool | None:
        self.doc = NULL if metadata is None else metadata
        self.pos, self.row = 0, NULL
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

    def _document(self) -> Any:
        self._expect(self.document_sql)
        return self.doc

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
        if token == "1":  # the constants `1 = 1` and `1 = 0`
            self._expect("=")
            return {"1": True, "0": False}[self._next()]
        if token == "JSON_EXISTS":
            return self._json_exists()
        if token == "JSON_EQUAL":
            return self._json_equal()
        if token == "EXISTS":
            return self._exists_json_table()
        raise AssertionError(f"condition outside the evaluated subset: {token!r}")

    def _case(self) -> bool:
        """`CASE WHEN c THEN 0 ELSE 1 END = 1`: true unless c is TRUE (so UNKNOWN counts as "no match")."""
        self._expect("CASE", "WHEN")
        condition = self._or()
        self._expect("THEN", "0", "ELSE", "1", "END", "=", "1")
        return condition is not True

    def _json_exists(self) -> bool | None:
        self._expect("(")
        doc = self._document()
        self._expect(",")
        path, variables = self._string(), {}
        if self._peek() == "PASSING":
            self._expect("PASSING")
            variables["v"] = self._bind()
            self._expect("AS", '"v"')
        self._expect(")")
        if doc is NULL:
            return None
        try:
            return bool(eval_path(doc, path, variables))
        except PathError:
            return False  # FALSE ON ERROR

    def _json_equal(self) -> bool | None:
        self._expect("(")
        left = self._json_operand()
        self._expect(",")
        right = self._json_operand()
        self._expect(")")
        if left is NULL or right is NULL:
            return None
        return json_equal(left, right)

    def _json_operand(self) -> Any:
        token = self._next()
        if token == "JSON_QUERY":
            self._expect("(")
            doc = self._document()
            self._expect(",")
            path = self._string()
            self._expect("RETURNING", "JSON", ")")
            if doc is NULL:
                return NULL
            try:
                items = eval_path(doc, path, {})
            except PathError:
                return NULL  # NULL ON ERROR
            return items[0] if len(items) == 1 else NULL  # NULL ON EMPTY; several items need a wrapper
        if token == "JSON":
            self._expect("(")
            text = self._bind()
            self._expect(")")
            return NULL if text is NULL else json.loads(text)
        if token == "jt.item":
            return self.row
        raise AssertionError(f"JSON operand outside the evaluated subset: {token!r}")

    def _exists_json_table(self) -> bool:
        """EXISTS (SELECT 1 FROM JSON_TABLE(doc, 'strict path[*]' COLUMNS (item JSON PATH '$')) jt WHERE cond)."""
        self._expect("(", "SELECT", "1", "FROM", "JSON_TABLE", "(")
        doc = self._document()
        self._expect(",")
        path = self._string()
        assert path.endswith("[*]"), f"JSON_TABLE rows come from an array step: {path!r}"
        self._expect("COLUMNS", "(", "item", "JSON", "PATH", "'$'", ")", ")", "jt", "WHERE")
        rows: list[Any] = []
        if doc is not NULL:
            try:
                rows = eval_path(doc, path, {})
            except PathError:
                rows = []  # NULL ON ERROR: no rows
        start, found = self.pos, False
        for row in rows or [NULL]:  # parse the WHERE condition at least once, even without rows
            self.pos, self.row = start, row
            found = (self._or() is True and bool(rows)) or found
        self.row = NULL
        self._expect(")")
        return found


def oracle_matches(metadata_filter: Any, stored: dict | None) -> bool:
    sql, params = compile_oracle(metadata_filter)
    return OracleConditionEvaluator(sql, params).matches(stored)


# ---------------------------------------------------------------------------------------------------------------
# 1. Exact SQL for every filter of §5.4 and §5.3.
# ---------------------------------------------------------------------------------------------------------------

F5 = {"source": "chat", "tags": {"$array_contains": "trip", "$not": {"$array_contains": "archived"}}}

TAGS_IS_ARRAY = 'JSON_EXISTS(r.metadata, \'strict $."tags"?(@.type() == "array")\')'

# id: (filter, exact SQL, exact binds)
COMPILED = {
    "list": (
        {"tags": ["prod", "urgent"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["prod", "urgent"]'},
    ),
    "list-reordered": (
        {"tags": ["urgent", "prod"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["urgent", "prod"]'},
    ),
    "list-short": (
        {"tags": ["prod"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["prod"]'},
    ),
    "nested": (
        {"review": {"status": "open"}},
        '(JSON_EXISTS(r.metadata, \'strict $."review"?(@.type() == "object")\') AND '
        'JSON_EXISTS(r.metadata, \'strict $."review"."status"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v"))',
        {"mf0": "open"},
    ),
    "scalar-slack": (
        {"source": "slack"},
        'JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": "slack"},
    ),
    "contains": (
        {"tags": {"$array_contains": "trip"}},
        f"({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf0 AS "v")))',
        {"mf0": "trip"},
    ),
    "contains-all-of": (
        {"tags": {"$array_contains": ["trip", "urgent"]}},
        f"({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf0 AS "v") AND '
        'JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf1 AS "v")))',
        {"mf0": "trip", "mf1": "urgent"},
    ),
    "contains-any": (
        {"tags": {"$array_contains_any": ["trip", "urgent"]}},
        f"({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf0 AS "v") OR '
        'JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf1 AS "v")))',
        {"mf0": "trip", "mf1": "urgent"},
    ),
    "not-contains": (
        {"tags": {"$not": {"$array_contains": "archived"}}},
        f"(CASE WHEN ({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf0 AS "v"))) '
        "THEN 0 ELSE 1 END = 1)",
        {"mf0": "archived"},
    ),
    "F5": (
        F5,
        'JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v") AND '
        f"(({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf1 AS "v"))) AND '
        f"(CASE WHEN ({TAGS_IS_ARRAY} AND "
        '(JSON_EXISTS(r.metadata, \'strict $."tags"[*]?(@.stringOnly() == $v)\' PASSING :mf2 AS "v"))) '
        "THEN 0 ELSE 1 END = 1))",
        {"mf0": "chat", "mf1": "trip", "mf2": "archived"},
    ),
    "not-scalar": (
        {"source": {"$not": "chat"}},
        '(CASE WHEN JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v") '
        "THEN 0 ELSE 1 END = 1)",
        {"mf0": "chat"},
    ),
    "F1": (
        {"source": "chat"},
        'JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": "chat"},
    ),
    "F2": (
        {"travel": {"need": "transit"}},
        '(JSON_EXISTS(r.metadata, \'strict $."travel"?(@.type() == "object")\') AND '
        'JSON_EXISTS(r.metadata, \'strict $."travel"."need"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v"))',
        {"mf0": "transit"},
    ),
    "F3": (
        {"tags": ["trip", "urgent"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["trip", "urgent"]'},
    ),
    "F4": (
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"]},
        'JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v") AND '
        '(JSON_EXISTS(r.metadata, \'strict $."travel"?(@.type() == "object")\') AND '
        'JSON_EXISTS(r.metadata, \'strict $."travel"."need"?(@.stringOnly() == $v)\' PASSING :mf1 AS "v")) AND '
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf2))",
        {"mf0": "chat", "mf1": "transit", "mf2": '["trip", "urgent"]'},
    ),
    "F6": (
        {"source": "slack"},
        'JSON_EXISTS(r.metadata, \'strict $."source"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": "slack"},
    ),
    "F7": (
        {"review": {"status": "open"}},
        '(JSON_EXISTS(r.metadata, \'strict $."review"?(@.type() == "object")\') AND '
        'JSON_EXISTS(r.metadata, \'strict $."review"."status"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v"))',
        {"mf0": "open"},
    ),
    "F8": (
        {"tags": ["prod", "urgent"]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"tags\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '["prod", "urgent"]'},
    ),
}


@pytest.mark.parametrize("filter_id", list(COMPILED))
def test_each_spec_filter_compiles_to_this_exact_sql_and_binds(filter_id):
    metadata_filter, expected_sql, expected_params = COMPILED[filter_id]
    sql, params = compile_oracle(metadata_filter)
    assert sql == expected_sql
    assert params == expected_params
    assert all(type(params[k]) is type(expected_params[k]) for k in params)  # "1" is not 1


# Further shapes whose SQL is pinned: scalars of every JSON type, exact lists holding objects, members that are
# objects (JSON_TABLE), empty operands, an empty object, and a double negation.
MORE_COMPILED = [
    pytest.param(
        {"n": 1},
        'JSON_EXISTS(r.metadata, \'strict $."n"?(@.numberOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": 1},
        id="number",
    ),
    pytest.param(
        {"n": 1.5},
        'JSON_EXISTS(r.metadata, \'strict $."n"?(@.numberOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": 1.5},
        id="float",
    ),
    pytest.param(
        {"n": True},
        'JSON_EXISTS(r.metadata, \'strict $."n"?(@.type() == "boolean" && @.booleanOnly() == true)\')',
        {},
        id="true",
    ),
    pytest.param(
        {"n": False},
        'JSON_EXISTS(r.metadata, \'strict $."n"?(@.type() == "boolean" && @.booleanOnly() == false)\')',
        {},
        id="false",
    ),
    pytest.param({"n": None}, 'JSON_EXISTS(r.metadata, \'strict $."n"?(@.type() == "null")\')', {}, id="null"),
    pytest.param(
        {"items": [{"a": 1}, [None]]},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"items\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '[{"a": 1}, [null]]'},
        id="list-of-object-and-list",
    ),
    pytest.param(
        {"items": {"$array_contains": {"a": 1}}},
        '(JSON_EXISTS(r.metadata, \'strict $."items"?(@.type() == "array")\') AND '
        "(EXISTS (SELECT 1 FROM JSON_TABLE(r.metadata, 'strict $.\"items\"[*]' COLUMNS (item JSON PATH '$')) jt "
        "WHERE JSON_EQUAL(jt.item, JSON(:mf0)))))",
        {"mf0": '{"a": 1}'},
        id="contains-object",
    ),
    pytest.param(
        {"items": {"$array_contains_any": [None, ["x"], False]}},
        '(JSON_EXISTS(r.metadata, \'strict $."items"?(@.type() == "array")\') AND '
        '(JSON_EXISTS(r.metadata, \'strict $."items"[*]?(@.type() == "null")\') OR '
        "EXISTS (SELECT 1 FROM JSON_TABLE(r.metadata, 'strict $.\"items\"[*]' COLUMNS (item JSON PATH '$')) jt "
        "WHERE JSON_EQUAL(jt.item, JSON(:mf0))) OR "
        'JSON_EXISTS(r.metadata, \'strict $."items"[*]?(@.type() == "boolean" && @.booleanOnly() == false)\')))',
        {"mf0": '["x"]'},
        id="contains-any-null-list-false",
    ),
    pytest.param(
        {"tags": {"$array_contains": []}},
        'JSON_EXISTS(r.metadata, \'strict $."tags"?(@.type() == "array")\')',
        {},
        id="contains-empty-list",
    ),
    pytest.param({"tags": {"$array_contains_any": []}}, "1 = 0", {}, id="contains-any-empty-list"),
    pytest.param({}, "1 = 1", {}, id="empty-filter"),
    pytest.param(
        {"review": {}},
        '(JSON_EXISTS(r.metadata, \'strict $."review"?(@.type() == "object")\') AND 1 = 1)',
        {},
        id="empty-nested-object",
    ),
    pytest.param(
        {"n": {"$not": {"$not": 1}}},
        "(CASE WHEN (CASE WHEN JSON_EXISTS(r.metadata, 'strict $.\"n\"?(@.numberOnly() == $v)' PASSING :mf0 AS "
        '"v") THEN 0 ELSE 1 END = 1) THEN 0 ELSE 1 END = 1)',
        {"mf0": 1},
        id="double-not",
    ),
    pytest.param(
        {"e": ""},
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"e\"' RETURNING JSON), JSON(:mf0))",
        {"mf0": '""'},
        id="empty-string-as-json-text",
    ),
    pytest.param(
        {"e": {"$array_contains": ""}},
        '(JSON_EXISTS(r.metadata, \'strict $."e"?(@.type() == "array")\') AND '
        "(EXISTS (SELECT 1 FROM JSON_TABLE(r.metadata, 'strict $.\"e\"[*]' COLUMNS (item JSON PATH '$')) jt "
        "WHERE JSON_EQUAL(jt.item, JSON(:mf0)))))",
        {"mf0": '""'},
        id="empty-string-member-as-json-text",
    ),
    pytest.param(
        {"review-status": "open"},
        'JSON_EXISTS(r.metadata, \'strict $."review-status"?(@.stringOnly() == $v)\' PASSING :mf0 AS "v")',
        {"mf0": "open"},
        id="hyphenated-key",
    ),
]


@pytest.mark.parametrize(("metadata_filter", "expected_sql", "expected_params"), MORE_COMPILED)
def test_other_filter_shapes_compile_to_this_exact_sql(metadata_filter, expected_sql, expected_params):
    sql, params = compile_oracle(metadata_filter)
    assert sql == expected_sql
    assert params == expected_params
    assert all(type(params[k]) is type(expected_params[k]) for k in params)


def test_bind_names_use_the_prefix_and_count_up_across_one_compilation():
    sql, params = compile_oracle({"a": "x", "b": {"c": 2}, "d": {"$array_contains": ["y", "z"]}}, bind_prefix="r_mf")
    assert params == {"r_mf0": "x", "r_mf1": 2, "r_mf2": "y", "r_mf3": "z"}
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


# The evaluator itself, on the documented rules it encodes (so a mistake in the oracle is caught too).
def test_evaluator_strict_path_errors_are_false_and_a_null_document_is_unknown():
    exists = 'JSON_EXISTS(r.metadata, \'strict $."a"[*]?(@.stringOnly() == $v)\' PASSING :b AS "v")'
    evaluator = OracleConditionEvaluator(exists, {"b": "x"})
    assert evaluator.evaluate({"a": ["y", "x"]}) is True
    assert evaluator.evaluate({"a": "x"}) is False  # [*] on a scalar: an error in strict mode, FALSE ON ERROR
    assert evaluator.evaluate({}) is False  # missing member: an error in strict mode
    assert evaluator.evaluate({"a": [1, True, None, {"x": "x"}, "x"]}) is True  # wrong types only filter items out
    assert evaluator.evaluate(None) is None  # JSON_EXISTS on a NULL document is UNKNOWN
    negated = OracleConditionEvaluator(f"(CASE WHEN {exists} THEN 0 ELSE 1 END = 1)", {"b": "x"})
    assert [negated.evaluate(d) for d in ({"a": ["x"]}, {"a": "x"}, None)] == [False, True, True]


def test_evaluator_json_equal_with_null_is_unknown_and_compares_json_values():
    equal = OracleConditionEvaluator(
        "JSON_EQUAL(JSON_QUERY(r.metadata, 'strict $.\"a\"' RETURNING JSON), JSON(:b))", {"b": '[{"x": 1, "y": 2}]'}
    )
    assert equal.evaluate({"a": [{"y": 2, "x": 1.0}]}) is True  # member order ignored, 1 == 1.0
    assert equal.evaluate({"a": [{"y": 2, "x": True}]}) is False  # true is not 1
    assert equal.evaluate({"a": [{"x": 1}]}) is False
    assert equal.evaluate({}) is None  # JSON_QUERY gives NULL, JSON_EQUAL(NULL, …) is UNKNOWN
    assert equal.evaluate(None) is None
    assert OracleConditionEvaluator("JSON_EQUAL(jt.item, JSON(:b))", {"b": ""}).evaluate({}) is None  # '' is NULL


def test_evaluator_rejects_sql_outside_the_compilers_subset():
    for sql in (
        "JSON_EXISTS(r.metadata, 'lax $.\"a\"')",  # lax mode would unwrap arrays
        "JSON_EXISTS(r.metadata, '$.\"a\"')",
        "NOT (1 = 1)",
        "JSON_EXISTS(t.metadata, 'strict $.\"a\"')",  # another column
        'JSON_EXISTS(r.metadata, \'strict $."a"?(@ == $v)\' PASSING :b AS "v")',  # untyped comparison
    ):
        with pytest.raises(AssertionError):
            OracleConditionEvaluator(sql, {"b": "x"}).evaluate({"a": "x"})


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
    {"tags": None},
    {"review": {"status": "open", "by": "x"}},
    {"review": {"status": "open"}},
    {"review": {"status": "closed"}},
    {"review": "open"},
    {"review": ["open"]},
    {"review": {"status": ["open"]}},
    {"review": {}},
    {"review": [{"status": "open"}]},
    {"source": "slack", "x": 1},
    {"source": "slack"},
    {"source": "Slack"},
    {"source": "chat"},
    {"source": "chat", "tags": ["trip"]},
    {"source": "chat", "tags": ["trip", "archived"]},
    {"source": "chat", "tags": ["urgent", "trip", "x"]},
    {"source": ["chat"]},
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
    {"a": {"b": {"c": 1, "d": 2}, "e": 3}},
    {"a": {"b": {"c": 2}}},
    {"a": {"b": 1}},
    {"a.b": 1},
    {"a": {"b": {"c": [1, 2]}}},
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
    # nested objects: containment, empty object, wrong types, two levels, lists inside
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
    {"tags": {"$not": {"$array_contains": "trip"}}},
    {"tags": {"$not": {"$array_contains_any": []}}},
    {"tags": {"$not": {"$array_contains": []}}},
    {"items": {"$not": {"$array_contains": {"c": 3}}}},
    {"tags": {"$not": {"$not": {"$array_contains": "trip"}}}},
    {"a": {"b": {"$not": {"c": 1}}}},
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


def oracle_selection(metadata_filter) -> list[int]:
    sql, params = compile_oracle(metadata_filter)
    evaluator = OracleConditionEvaluator(sql, params)
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


@pytest.mark.parametrize("metadata_filter", CROSS_CHECK, ids=[canonical(f)[:60] for f in CROSS_CHECK])
def test_no_bind_is_an_empty_string_which_oracle_would_read_as_null(metadata_filter):
    _, params = compile_oracle(metadata_filter)
    assert "" not in params.values()
    assert None not in params.values()


def test_the_cross_check_discriminates(sqlite_corpus):
    """The filters above split the corpus in many different ways (so agreement is not trivial)."""
    store, ids = sqlite_corpus
    selections = [tuple(sqlite_selection(store, ids, f)) for f in CROSS_CHECK]
    assert len(set(selections)) >= 60
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
    assert f'\'strict $."{key}"?(@.type() == "object")\'' in sql
    assert f'\'strict $."{key}"."{key}"?(@.stringOnly() == $v)\'' in sql
    assert params == {"mf0": "v"}
    assert oracle_matches({key: {key: "v"}}, {key: {key: "v", "x": 1}})
    assert not oracle_matches({key: {key: "v"}}, {key + "x": {key: "v"}})


@pytest.mark.parametrize("value", [*HOSTILE, "') OR 1=1 --", '"v") OR ("', "$w @.x", "\\u0027"])
def test_hostile_values_appear_only_in_binds_and_still_match_themselves(value):
    for metadata_filter, selected, rejected in (
        ({"s": value}, {"s": value}, {"s": value + "!"}),
        ({"s": {"$array_contains": value}}, {"s": ["other", value]}, {"s": value}),
        ({"s": {"$array_contains_any": ["zzz", value]}}, {"s": [value]}, {"s": [value + "!"]}),
        ({"s": {"$not": value}}, {"s": value + "!"}, {"s": value}),
        ({"s": [value, {"k": value}]}, {"s": [value, {"k": value}]}, {"s": [value, {"k": value, "x": 1}]}),
        ({"s": {"$array_contains": {value: value}}}, {"s": [{value: value}]}, {"s": [{value: value + "!"}]}),
        ({"n": {"m": value}}, {"n": {"m": value}}, {"n": {"m": [value]}}),
    ):
        sql, params = compile_oracle(metadata_filter)
        assert value not in sql
        assert json.dumps(value) not in sql
        assert any(value == p or json.dumps(value) in p for p in params.values() if isinstance(p, str))
        evaluator = OracleConditionEvaluator(sql, params)
        assert evaluator.matches(selected), (metadata_filter, selected)
        assert not evaluator.matches(rejected), (metadata_filter, rejected)


def test_keys_inside_values_are_values_and_are_not_validated():
    odd = {'it\'s "odd" $ @ --\n': [1]}
    sql, params = compile_oracle({"items": [odd], "more": {"$array_contains": odd}})
    assert "odd" not in sql
    assert params == {"mf0": json.dumps([odd]), "mf1": json.dumps(odd)}
    assert oracle_matches({"items": [odd], "more": {"$array_contains": odd}}, {"items": [odd], "more": [odd, 2]})
