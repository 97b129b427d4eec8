"""Event timestamps and time-to-live rules (spec §1.4, §1.5; DECISIONS D10).

Timestamps are stored as canonical UTC ISO-8601 strings of one fixed width, so that they sort and
compare as text in SQL exactly as they do as instants.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

from .limits import check_int_range
from .types import NOT_SET, MemoryRetentionConfig, TimeToLiveAnchor, coerce_enum

FAR_FUTURE = "9999-12-31T23:59:59.999999+00:00"


def format_utc(moment: datetime) -> str:
    """Fixed-width UTC text (four-digit year, microseconds), so text order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def utc_now() -> str:
    return format_utc(datetime.now(UTC))


def parse_timestamp(value: Any, name: str = "timestamp") -> datetime:
    """Parse an ISO-8601 timestamp; a value without a timezone is UTC. ValueError otherwise."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{name} must be an ISO-8601 timestamp, not {value!r}") from None
    else:
        raise ValueError(f"{name} must be an ISO-8601 string, not {type(value).__name__}")
    if not moment.tzinfo:
        return moment.replace(tzinfo=UTC)
    try:  # stored as UTC, which must still be a year from 1 to 9999
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{name} {value!s} is outside the years 1 to 9999 once converted to UTC") from None


def normalize_timestamp(value: Any, name: str = "timestamp") -> str | None:
    """None stays None (no event time); anything else becomes canonical UTC text."""
    return None if value is None else format_utc(parse_timestamp(value, name))


def check_ttl_days(ttl_days: Any) -> None:
    if ttl_days is NOT_SET or ttl_days is None:
        return
    if isinstance(ttl_days, bool) or not isinstance(ttl_days, int) or ttl_days < 1:
        raise ValueError(f"ttl_days must be a positive integer or None, not {ttl_days!r}")
    check_int_range("ttl_days", ttl_days)


def resolve_lifetime(ttl_days: Any, retention: MemoryRetentionConfig) -> int | None:
    """The lifetime in days for a `ttl_days` argument, or None for "never expires".

    OMITTED means the schema default (`default_ttl_days`); None means the retention cap or never;
    an integer above the cap is clamped with a warning rather than refused, as the spec says.
    """
    check_ttl_days(ttl_days)
    if ttl_days is NOT_SET:
        days = retention.default_ttl_days
    elif ttl_days is None:
        days = retention.max_ttl_days
    else:
        days = ttl_days
    if days is not None and retention.max_ttl_days is not None and days > retention.max_ttl_days:
        warnings.warn(
            f"ttl_days={days} exceeds the retention limit; clamped to max_ttl_days={retention.max_ttl_days}",
            UserWarning,
            stacklevel=4,
        )
        days = retention.max_ttl_days
    return days


def expiry(
    ttl_days: Any,
    ttl_anchor: Any,
    *,
    created_at: str,
    timestamp: str | None,
    retention: MemoryRetentionConfig,
) -> str | None:
    """The expiry instant of a record, or None when it never expires.

    `timestamp` is the record's event time (canonical text or None): the TIMESTAMP anchor needs
    one. An omitted anchor means CREATED_AT, on creation and on refresh alike; a refresh that omits
    both arguments keeps the stored expiry and never gets here.
    """
    anchor = (
        TimeToLiveAnchor.CREATED_AT
        if ttl_anchor is NOT_SET
        else coerce_enum(TimeToLiveAnchor, ttl_anchor, "ttl_anchor")
    )
    days = resolve_lifetime(ttl_days, retention)
    if anchor is TimeToLiveAnchor.TIMESTAMP and timestamp is None:
        raise ValueError("ttl_anchor=TIMESTAMP needs an ISO-8601 event timestamp on the record")
    if days is None:
        return None
    start = parse_timestamp(timestamp if anchor is TimeToLiveAnchor.TIMESTAMP else created_at)
    try:
        return format_utc(start + timedelta(days=days))
    except OverflowError:
        return FAR_FUTURE  # past the calendar's end: it never expires in practice
