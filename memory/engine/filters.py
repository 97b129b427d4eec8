"""The metadata filter language of spec §5: parsed once into a small tree, then compiled to SQL.

Semantics (every layer, D8):
- a filter is a dict; its entries are AND-ed and each names a key that must exist;
- a scalar matches by equality (JSON types kept apart: true is not 1), a list by exact equality
  (same elements, same order, same length), a dict by recursive containment;
- operator dicts: ``$array_contains`` (a value, or a list of which every value must be present),
  ``$array_contains_any`` (a list), ``$not`` (negates any field expression, and so matches a
  missing key or, for membership, a value that is not an array); several operators are AND-ed.

Decisions where the spec is open (OQ-13): a dict mixing ``$`` keys and plain keys, an unknown
operator, and a non-list operand of ``$array_contains_any`` are ValueErrors; an empty list operand
of ``$array_contains`` matches any array and of ``$array_contains_any`` matches nothing.

SQLite's compiled SQL carries bind placeholders for keys and values, never their text. Oracle's
SQL/JSON paths cannot be bound, so there keys are validated and quoted (`json_path_step`) and only
values are bound.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .limits import MAX_FILTER_DEPTH, MAX_FILTER_TERMS, check_json_tree

OPERATORS = ("$array_contains", "$array_contains_any", "$not")
_GROUP = 64
"""Conditions joined flat in one group; more are grouped in parentheses, so that a long filter
compiles to a shallow expression (SQLite refuses expressions nested 1,000 deep)."""


@dataclass(frozen=True)
class Equals:
    value: Any


@dataclass(frozen=True)
class Contains:
    """Containment in an object: each (key, expression) entry must hold."""

    entries: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class ArrayContains:
    values: tuple[Any, ...]
    any_of: bool


@dataclass(frozen=True)
class Not:
    expr: Any


@dataclass(frozen=True)
class AllOf:
    exprs: tuple[Any, ...]


def _check_json_value(value: Any, where: str) -> None:
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"metadata filter value at {where} must be a finite number, not {value!r}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json_value(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"metadata filter keys must be strings, not {key!r} at {where}")
            _check_json_value(item, f"{where}.{key}")
        return
    raise ValueError(f"metadata filter value at {where} is not JSON-compatible: {type(value).__name__}")


def _parse_object(spec: dict, where: str) -> Contains:
    entries = []
    for key, expr in spec.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata filter keys must be non-empty strings, not {key!r} at {where}")
        if key.startswith("$"):
            raise ValueError(f"unknown metadata filter operator {key!r} at {where}; operators go inside a field")
        entries.append((key, _parse_field(expr, f"{where}.{key}" if where != "$" else f"$.{key}")))
    return Contains(tuple(entries))


def _parse_field(expr: Any, where: str) -> Any:
    if isinstance(expr, dict):
        operator_keys = [k for k in expr if isinstance(k, str) and k.startswith("$")]
        if not operator_keys:
            return _parse_object(expr, where)
        if len(operator_keys) != len(expr):
            raise ValueError(f"metadata filter at {where} mixes operators and plain keys: {sorted(map(str, expr))}")
        parsed = [_parse_operator(op, operand, where) for op, operand in expr.items()]
        return parsed[0] if len(parsed) == 1 else AllOf(tuple(parsed))
    _check_json_value(expr, where)
    return Equals(_freeze(expr))


def _parse_operator(op: str, operand: Any, where: str) -> Any:
    if op == "$not":
        return Not(_parse_field(operand, f"{where}.$not"))
    if op == "$array_contains":
        values = operand if isinstance(operand, (list, tuple)) else [operand]
    elif op == "$array_contains_any":
        if not isinstance(operand, (list, tuple)):
            raise ValueError(f"$array_contains_any at {where} expects a list, not {operand!r}")
        values = operand
    else:
        raise ValueError(f"unknown metadata filter operator {op!r} at {where}; known: {', '.join(OPERATORS)}")
    _check_json_value(list(values), f"{where}.{op}")
    return ArrayContains(tuple(_freeze(v) for v in values), any_of=op == "$array_contains_any")


def _freeze(value: Any) -> Any:
    """Lists become tuples and dicts item tuples, so parsed filters are hashable and immutable."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: _freeze(v) for k, v in value.items()}
    return value


def parse_filter(metadata_filter: Any) -> Contains | None:
    """Validate a metadata filter; None means "no filter". Raises ValueError on anything else."""
    if metadata_filter is None:
        return None
    if not isinstance(metadata_filter, dict):
        raise ValueError(f"metadata_filter must be a dict or None, not {type(metadata_filter).__name__}")
    check_json_tree(metadata_filter, "metadata_filter", MAX_FILTER_DEPTH, MAX_FILTER_TERMS)
    return _parse_object(metadata_filter, "$")


def _joined(clauses: list[str], operator: str) -> str:
    """`clauses` joined by AND or OR, in parenthesised groups of at most _GROUP when there are
    more, so that the expression stays shallow however many there are."""
    while len(clauses) > _GROUP:
        clauses = [
            "(" + f" {operator} ".join(clauses[start : start + _GROUP]) + ")"
            for start in range(0, len(clauses), _GROUP)
        ]
    return f" {operator} ".join(clauses)


class SQLiteFilterCompiler:
    """Compiles a parsed filter to an SQLite boolean expression over JSON text, with named binds.

    It walks the JSON with json_each, so keys are bound values rather than parts of a JSON path:
    any key is safe and no path escaping is needed.
    """

    def __init__(self, bind_prefix: str = "mf") -> None:
        self.params: dict[str, Any] = {}
        self._prefix = bind_prefix
        self._aliases = 0

    def compile(self, tree: Contains, document_sql: str) -> str:
        return self._contains(tree, document_sql)

    def _bind(self, value: Any) -> str:
        name = f"{self._prefix}{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def _alias(self) -> str:
        self._aliases += 1
        return f"je{self._aliases}"

    def _contains(self, node: Contains, document_sql: str) -> str:
        if not node.entries:
            return "1"
        return _joined([self._field(document_sql, key, expr) for key, expr in node.entries], "AND")

    def _field(self, document_sql: str, key: str, expr: Any) -> str:
        if isinstance(expr, AllOf):
            return "(" + _joined([self._field(document_sql, key, e) for e in expr.exprs], "AND") + ")"
        if isinstance(expr, Not):
            return f"NOT ({self._field(document_sql, key, expr.expr)})"
        j = self._alias()
        return (
            f"EXISTS (SELECT 1 FROM json_each({document_sql}) AS {j} "
            f"WHERE {j}.key = {self._bind(key)} AND {self._value(j, expr)})"
        )

    def _value(self, j: str, expr: Any) -> str:
        if isinstance(expr, Equals):
            return self._equals(j, expr.value)
        if isinstance(expr, Contains):
            return f"{j}.type = 'object' AND {self._contains(expr, f'{j}.value')}"
        if isinstance(expr, ArrayContains):
            if not expr.values:
                return f"{j}.type = 'array' AND {'0' if expr.any_of else '1'}"
            if expr.any_of:
                e = self._alias()
                matches = _joined([f"({self._equals(e, v)})" for v in expr.values], "OR")
                return f"{j}.type = 'array' AND EXISTS (SELECT 1 FROM json_each({j}.value) AS {e} WHERE {matches})"
            clauses = []
            for v in expr.values:
                e = self._alias()
                clauses.append(f"EXISTS (SELECT 1 FROM json_each({j}.value) AS {e} WHERE {self._equals(e, v)})")
            return f"{j}.type = 'array' AND " + _joined(clauses, "AND")
        raise TypeError(f"not a filter expression: {expr!r}")

    def _equals(self, j: str, value: Any) -> str:
        """Exact JSON equality of the json_each row `j` with `value` (dicts exactly, not contained)."""
        if value is None:
            return f"{j}.type = 'null'"
        if value is True:
            return f"{j}.type = 'true'"
        if value is False:
            return f"{j}.type = 'false'"
        if isinstance(value, (int, float)):
            if isinstance(value, int) and not -(2**63) <= value < 2**63:
                value = float(value)  # SQLite reads integers beyond 64 bits as reals, and binds no wider ints
            return f"{j}.type IN ('integer', 'real') AND {j}.atom = {self._bind(value)}"
        if isinstance(value, str):
            return f"{j}.type = 'text' AND {j}.atom = {self._bind(value)}"
        if isinstance(value, tuple):
            return self._exact_children(j, "array", list(enumerate(value)))
        if isinstance(value, dict):
            return self._exact_children(j, "object", list(value.items()))
        raise TypeError(f"not a JSON value: {value!r}")

    def _exact_children(self, j: str, json_type: str, children: list[tuple[Any, Any]]) -> str:
        clauses = [f"{j}.type = '{json_type}'", f"(SELECT count(*) FROM json_each({j}.value)) = {len(children)}"]
        for key, child in children:
            e = self._alias()
            clauses.append(
                f"EXISTS (SELECT 1 FROM json_each({j}.value) AS {e} "
                f"WHERE {e}.key = {self._bind(key)} AND {self._equals(e, child)})"
            )
        return _joined(clauses, "AND")


_PATH_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$")
"""Keys an Oracle JSON path can name safely: letters, digits, underscores and single hyphens."""


def json_path_step(key: str) -> str:
    """One quoted object step of an SQL/JSON path (`."key"`); ValueError for a key it cannot name safely.

    A path is part of the SQL text (Oracle cannot bind it), so keys are held to a plain alphabet
    instead of being escaped: quotes, backslashes, `$`, `@`, whitespace and the like never reach it.
    """
    if not isinstance(key, str) or not _PATH_KEY.fullmatch(key) or len(key) > 128:  # `$` alone allows a final "\n"
        raise ValueError(
            f"metadata key {key!r} cannot be used in a filter on Oracle: use letters, digits, '_' "
            "and single '-' (at most 128 characters)"
        )
    return f'."{key}"'


class OracleFilterCompiler:
    """Compiles a parsed filter to an Oracle SQL/JSON condition over a native JSON column.

    It relies on no path mode: Oracle evaluates SQL/JSON paths in lax mode, which unwraps
    arrays (`$.tags?(@ == "a")` would match `["a"]`). So every path here has one step, taken on
    a value known to be an object: the value of a key is
    `JSON_QUERY(<object>, '$."key"' RETURNING JSON)` (keys validated by `json_path_step`), its
    JSON type is the first character of its serialisation, and every comparison is JSON_EQUAL
    with the value bound as JSON text, which keeps JSON types apart (true is not 1, "1" is not
    1) as SQLiteFilterCompiler does. A missing key gives NULL, and negations use CASE, so that
    an unknown comparison counts as "does not match" and its negation as a match.
    """

    def __init__(self, bind_prefix: str = "mf") -> None:
        self.params: dict[str, Any] = {}
        self._prefix = bind_prefix

    def compile(self, tree: Contains, document_sql: str) -> str:
        return self._contains(tree, document_sql)

    def _json_bind(self, value: Any) -> str:
        """`JSON(:bind)` of a filter value, bound as JSON text ('""' for "", which Oracle would read as NULL)."""
        name = f"{self._prefix}{len(self.params)}"
        self.params[name] = json.dumps(_thaw(value))
        return f"JSON(:{name})"

    @staticmethod
    def _member(document: str, key: str) -> str:
        return f"JSON_QUERY({document}, '${json_path_step(key)}' RETURNING JSON)"

    @staticmethod
    def _is(value: str, opening: str) -> str:
        """`value` is an object ('{') or an array ('['): the first character of its serialisation,
        which TRUNCATE cuts to, so that no temporary LOB is built per row and key."""
        return f"JSON_SERIALIZE({value} RETURNING VARCHAR2(1) TRUNCATE) = '{opening}'"

    def _contains(self, node: Contains, document: str) -> str:
        if not node.entries:
            return "1 = 1"
        return _joined([self._field(self._member(document, key), expr) for key, expr in node.entries], "AND")

    def _field(self, value: str, expr: Any) -> str:
        if isinstance(expr, AllOf):
            return "(" + _joined([self._field(value, e) for e in expr.exprs], "AND") + ")"
        if isinstance(expr, Not):
            return f"(CASE WHEN {self._field(value, expr.expr)} THEN 0 ELSE 1 END = 1)"
        if isinstance(expr, Equals):
            return f"JSON_EQUAL({value}, {self._json_bind(expr.value)})"
        if isinstance(expr, Contains):
            return f"({self._is(value, '{')} AND {self._contains(expr, value)})"
        if isinstance(expr, ArrayContains):
            if not expr.values:
                return "1 = 0" if expr.any_of else self._is(value, "[")
            members = [
                f"EXISTS (SELECT 1 FROM JSON_TABLE({value}, '$[*]' COLUMNS (item JSON PATH '$')) jt "
                f"WHERE JSON_EQUAL(jt.item, {self._json_bind(member)}))"
                for member in expr.values
            ]
            joined = _joined(members, "OR" if expr.any_of else "AND")
            return f"({self._is(value, '[')} AND ({joined}))"
        raise TypeError(f"not a filter expression: {expr!r}")


def _thaw(value: Any) -> Any:
    """A frozen filter value back as plain JSON (tuples to lists)."""
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    return value
