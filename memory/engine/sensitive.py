"""Secrets and personal data in the text a write stores: detectors, masked previews, the policy.

Secrets are found by detect-secrets' plugins, run directly on the text (no baseline, no files);
phone numbers by phonenumbers' matcher; payment cards by their Luhn check digit (python-stdnum);
IBANs by python-stdnum's IBAN rules (the country's length and the mod-97 check); email
addresses by the HTML5 rule for an address (a domain with a dot). Each plugin runs only when a
cheap trigger for it occurs in the text (a provider's prefix, a keyword, a digit run, an "@"),
so that ordinary prose costs a few regex searches (bench/sensitive.py).

What a write does with a finding is the policy (`OAM_SENSITIVE_POLICY`): `flag` stores the text
and records the finding, `redact` replaces the span by `[REDACTED:<kind>]` before storing it,
`refuse` fails the write with a ValueError naming the kind, storing nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import phonenumbers
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from stdnum import iban, luhn

POLICY_ENV = "OAM_SENSITIVE_POLICY"
PHONE_REGION_ENV = "OAM_SENSITIVE_PHONE_REGION"
DEFAULT_PHONE_REGION = "US"
"""The region numbers without a country code are read in (phonenumbers' default region)."""


class SensitivePolicy(StrEnum):
    """What a write does with text holding a secret or personal data."""

    FLAG = "flag"
    REDACT = "redact"
    REFUSE = "refuse"


def policy_from(value: Any = None) -> SensitivePolicy:
    """A policy from a value (a SensitivePolicy or its name), else from OAM_SENSITIVE_POLICY, else flag."""
    if value is None:
        value = os.environ.get(POLICY_ENV) or SensitivePolicy.FLAG.value
    if isinstance(value, SensitivePolicy):
        return value
    if isinstance(value, str):
        try:
            return SensitivePolicy(value.strip().lower())
        except ValueError:
            pass
    choices = ", ".join(policy.value for policy in SensitivePolicy)
    raise ValueError(f"sensitive_policy must be one of {choices}, not {value!r}")


@dataclass(frozen=True)
class Detection:
    """One secret or piece of personal data in a text: its kind, where it is, how it shows masked."""

    kind: str
    start: int
    end: int
    preview: str
    digest: str
    """A digest of the value (sha256, hex): what "not sensitive" is remembered by, without the value."""


@dataclass(frozen=True)
class SensitiveFinding:
    """A finding as the store keeps it: what was found where, in which record, masked.

    `id` names the finding (AgentMemory.redact_finding); `start`/`end` is the span in the
    record's `field`; `masked_text` is the record's text with every finding in it masked, which
    pages and the API show instead of the text itself."""

    id: str
    kind: str
    field: str
    start: int
    end: int
    preview: str
    digest: str
    found_at: Any
    record_id: str
    record_type: str
    user_id: str | None
    agent_id: str | None
    thread_id: str | None
    masked_text: str

    @property
    def label(self) -> str:
        return KINDS.get(self.kind, self.kind)


KINDS = {
    "aws_key": "AWS access key",
    "azure_storage_key": "Azure storage key",
    "basic_auth": "password in a URL",
    "discord_token": "Discord bot token",
    "github_token": "GitHub token",
    "gitlab_token": "GitLab token",
    "jwt": "JSON Web Token",
    "mailchimp_key": "Mailchimp key",
    "npm_token": "npm token",
    "openai_key": "OpenAI key",
    "private_key": "private key",
    "pypi_token": "PyPI token",
    "sendgrid_key": "SendGrid key",
    "slack_token": "Slack token",
    "square_secret": "Square OAuth secret",
    "stripe_key": "Stripe key",
    "telegram_token": "Telegram bot token",
    "twilio_key": "Twilio key",
    "password": "password or secret in an assignment",
    "high_entropy": "high-entropy string",
    "email": "email address",
    "phone": "phone number",
    "card": "payment card number",
    "iban": "IBAN",
}
"""Every kind of finding, with how the pages name it."""
SECRET_KINDS = frozenset(KINDS) - {"email", "phone", "card", "iban"}

REDACTION = "[REDACTED:{kind}]"
_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")


def digest_of(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


_KEY_HEADER = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}-----")


def mask(value: str, kind: str = "") -> str:
    """The value with its middle hidden: `4111 •••• •••• 1111`, `AKIA••••••••MPLE`, `j•••@example.com`.

    Separators (spaces, dashes, dots) stay; at most eight bullets in a row, so a long key's
    preview stays short. An email keeps its domain and the first letter of a mailbox longer than
    one; a private key its BEGIN line, never the key material after it (a key pasted on one line).
    """
    if kind == "email" and "@" in value:
        local, _, domain = value.rpartition("@")
        return f"{local[:1] if len(local) > 1 else ''}•••@{domain}"
    if kind == "private_key":
        header = _KEY_HEADER.match(value)
        return (header.group(0) if header else "-----BEGIN PRIVATE KEY-----") + " •••"
    signs = [i for i, char in enumerate(value) if char.isalnum()]
    keep = 4 if len(signs) >= 12 else 2 if len(signs) >= 8 else 1
    shown = set(signs[:keep]) | (set(signs[-keep:]) if len(signs) >= 8 else set())
    out, run = [], 0
    for i, char in enumerate(value[:200]):
        if i in shown or not char.isalnum():
            out.append(char)
            run = 0
        elif run < 8:
            out.append("•")
            run += 1
    return "".join(out)


# --- secrets: detect-secrets' plugins, each behind a cheap trigger -----------------------------

_Plugin = Any


@dataclass(frozen=True)
class _SecretDetector:
    kind: str
    markers: tuple[str, ...]
    """Plain substrings, one of which the text (lower-cased when `folded`) holds wherever the
    plugin can match: its prefix, or a keyword its patterns need. Substring tests, not a regular
    expression: an alternation of them all costs more than the plugins it saves."""
    plugin: _Plugin
    folded: bool = False
    confirm: re.Pattern[str] | None = None
    """For markers common in prose ("." or ":"), what must also be there."""


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """A plugin pattern's secrets: the whole match, or its last group when that holds the value
    (AWS's secret key between quotes, the password of a URL) rather than a prefix (GitHub's ghp)."""
    for match in pattern.finditer(text):
        if pattern.groups and match.group(pattern.groups) and len(match.group(pattern.groups)) >= 8:
            yield match.span(pattern.groups)
        else:
            yield match.span()


_KEYWORD_LINE = re.compile(
    r"(?i)(?:api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|private_?key|"
    r"client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|contrase[ñn]a)\w*[\]'\"]{0,2}\s*(?::|=)"
)
_KEYWORD = KeywordDetector()


def _keyword_spans(text: str) -> Iterator[tuple[int, int]]:
    # The configuration files' patterns: `password: hunter2` and `api_key = "..."`, quoted or not,
    # as people paste them into a chat (the plugin's default patterns require quotes, as in code).
    offset = 0
    for line in text.splitlines(keepends=True):
        if _KEYWORD_LINE.search(line):
            for found in set(_KEYWORD.analyze_string(line, denylist_regex_to_group=CONFIG_DENYLIST_REGEX_TO_GROUP)):
                value = _assigned_value(found, line)
                if value and not _REDACTED.search(value):
                    for start, end in _spans_of(value, line):
                        yield offset + start, offset + end
        offset += len(line)


def _assigned_value(found: str, line: str) -> str:
    """The value of a keyword assignment as a password. Quoted, the whole quoted text; unquoted,
    the plugin takes the rest of the line (a config file's value), but in prose the value is the
    word after the sign (`password: hunter2, and my mail is ...`), and counts only when it looks
    like a password (six characters or more, not all lower-case letters: `The secret: we won`)."""
    if any(f"{quote}{found}{quote}" in line for quote in "\"'`"):
        return found
    words = found.split()
    value = words[0].rstrip(".,;:!?)") if words else ""
    if len(value) < 6 or (value.isalpha() and (value.islower() or value.istitle())):
        return ""
    return value


_SECRETS = (
    _SecretDetector("aws_key", ("a3t", "abia", "acca", "akia", "asia", "aws"), AWSKeyDetector(), folded=True),
    _SecretDetector("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), GitHubTokenDetector()),
    _SecretDetector("gitlab_token", ("gl", "GR1348941"), GitLabTokenDetector()),
    _SecretDetector("slack_token", ("xox", "hooks.slack.com"), SlackDetector(), folded=True),
    _SecretDetector("stripe_key", ("k_live_",), StripeDetector()),
    _SecretDetector("openai_key", ("T3BlbkFJ",), OpenAIDetector()),
    _SecretDetector("sendgrid_key", ("SG.",), SendGridDetector()),
    _SecretDetector("twilio_key", ("AC", "SK"), TwilioKeyDetector()),
    _SecretDetector("mailchimp_key", ("-us",), MailchimpDetector()),
    _SecretDetector("npm_token", ("_authToken",), NpmDetector()),
    _SecretDetector("pypi_token", ("pypi-AgE",), PypiTokenDetector()),
    _SecretDetector("discord_token", (".",), DiscordBotTokenDetector(), confirm=re.compile(r"[MNO][\w-]{23,25}\.")),
    _SecretDetector("telegram_token", (":",), TelegramBotTokenDetector(), confirm=re.compile(r"\d{8,10}:")),
    _SecretDetector("square_secret", ("sq0csp-",), SquareOAuthDetector()),
    _SecretDetector("azure_storage_key", ("AccountKey=",), AzureStorageKeyDetector()),
    _SecretDetector("jwt", ("eyJ",), JwtTokenDetector()),
)
_BASIC_AUTH = _SecretDetector("basic_auth", ("://",), BasicAuthDetector())
_MARKERS = tuple((marker, detector.folded, i) for i, detector in enumerate(_SECRETS) for marker in detector.markers)
"""Every detector's markers in one flat list: one loop of substring tests (no generator per detector)."""
_PRIVATE_KEY = PrivateKeyDetector()
_SECRET_SHAPE = re.compile(r"[A-Za-z0-9_.:/+=-]{16,}")
"""Every provider's key or token above is a run of 16 or more of these: without one, none can match."""

# High-entropy strings: detect-secrets requires quotes around them (as in code); in a chat a pasted
# token stands alone, so every long run of the plugins' charsets is a candidate, measured by the
# plugins' own entropy and limits. Candidates need a digit and a letter (long words are not keys).
_BASE64 = Base64HighEntropyString()
_HEX = HexHighEntropyString()
_LONG_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_=-]{20,}(?![\w+/=-])")
_HAS_DIGIT_AND_LETTER = re.compile(r"(?=.*\d)(?=.*[A-Za-z])")


_SECRET_WORD = re.compile(r"(?i)key|token|secret|passw|auth|bearer|credential")


def _high_entropy(text: str) -> Iterator[tuple[int, int]]:
    for match in _LONG_TOKEN.finditer(text):
        token = match.group().rstrip("=")
        if not _HAS_DIGIT_AND_LETTER.match(token) or token.count("/") > 2:
            continue  # a path, not a key
        is_hex = all(char in "0123456789abcdefABCDEF" for char in token)
        if is_hex and not _SECRET_WORD.search(text, max(0, match.start() - 40), match.start()):
            continue  # a commit, a digest, an id: hex is a secret only where the text says so
        plugin = _HEX if is_hex else _BASE64
        if plugin.calculate_shannon_entropy(token) > plugin.entropy_limit:
            yield match.start(), match.end()


def _spans_of(value: str, text: str) -> Iterator[tuple[int, int]]:
    start = text.find(value)
    while start >= 0:
        yield start, start + len(value)
        start = text.find(value, start + len(value))


_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d.*?(?:Private-MAC: \S+|\Z)",
    re.DOTALL,
)


def _secrets(text: str) -> Iterator[tuple[str, int, int]]:
    if ("PRIVATE KEY" in text or "PuTTY-User-Key" in text) and any(True for _ in _PRIVATE_KEY.analyze_string(text)):
        for match in _PRIVATE_KEY_BLOCK.finditer(text):
            yield "private_key", match.start(), match.end()
    lowered = text.lower()
    assigns = ":" in text or "=" in text  # a password in an assignment comes after one of them
    if assigns and (
        "key" in lowered or "pass" in lowered or "pwd" in lowered or "secret" in lowered or "contras" in lowered
    ):
        for start, end in _keyword_spans(text):
            yield "password", start, end
    detectors = [_BASIC_AUTH] if "://" in text else []
    shaped = _SECRET_SHAPE.search(text) is not None
    if shaped:
        triggered = set()
        for marker, folded, i in _MARKERS:
            if marker in (lowered if folded else text):
                triggered.add(i)
        detectors += [
            _SECRETS[i] for i in sorted(triggered) if _SECRETS[i].confirm is None or _SECRETS[i].confirm.search(text)
        ]
    for detector in detectors:
        for pattern in detector.plugin.denylist:
            for start, end in _matches(pattern, text):
                if not _REDACTED.search(text[start:end]):
                    yield detector.kind, start, end
    for start, end in _high_entropy(text) if shaped else ():
        yield "high_entropy", start, end


# --- personal data ----------------------------------------------------------------------------

# The HTML5 rule for a valid email address (WHATWG), with a dot in the domain: in prose,
# `name@host` alone is more often a handle than an address.
_EMAIL = re.compile(
    r"[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+"
)
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])")
_IBAN = re.compile(r"\b[A-Z]{2}\d\d(?: ?[A-Z0-9]){11,30}\b")
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_DIGITS = re.compile(r"\d[\d\s().+-]{5,}\d")


def _emails(text: str) -> Iterator[tuple[str, int, int]]:
    for match in _EMAIL.finditer(text):
        start, value = match.start(), match.group().rstrip(".")
        if _REDACTED.search(value):
            continue
        yield "email", start, start + len(value)


def _cards(text: str) -> Iterator[tuple[str, int, int]]:
    for match in _CARD.finditer(text):
        number = re.sub(r"[ -]", "", match.group())
        if 13 <= len(number) <= 19 and len(set(number)) > 1 and luhn.is_valid(number):
            yield "card", match.start(), match.end()


def _ibans(text: str) -> Iterator[tuple[str, int, int]]:
    for match in _IBAN.finditer(text):
        candidate = match.group()
        # The longest run of its groups that is a valid IBAN (prose may follow the number).
        groups = candidate.split(" ")
        for count in range(len(groups), 0, -1):
            value = " ".join(groups[:count])
            if len(value) >= 15 and iban.is_valid(value):
                yield "iban", match.start(), match.start() + len(value)
                break


_PHONE_CANDIDATE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d[\d .-]{5,16}\d(?![\w])")


def _phones(text: str, region: str) -> Iterator[tuple[str, int, int]]:
    # phonenumbers' matcher reads the whole text it is given (a few hundred microseconds for a
    # message): it is given only the runs of digits that could be a number (7 to 15 digits, not
    # an ISO date), and finds the numbers in them with its own rules.
    for candidate in _PHONE_CANDIDATE.finditer(text):
        value = candidate.group()
        digits = sum(char.isdigit() for char in value)
        if not 7 <= digits <= 15 or _ISO_DATE.search(value):
            continue
        for match in phonenumbers.PhoneNumberMatcher(value, region, leniency=phonenumbers.Leniency.VALID):
            yield "phone", candidate.start() + match.start, candidate.start() + match.end


def _personal(text: str, region: str) -> Iterator[tuple[str, int, int]]:
    if "@" in text:
        yield from _emails(text)
    if _DIGITS.search(text) and any(not _ISO_DATE.fullmatch(run) for run in _DIGITS.findall(text)):
        # every number below has seven digits or more (an IBAN too); a date alone is none of them
        yield from _cards(text)
        yield from _phones(text, region)
        yield from _ibans(text)


# Where two findings overlap, the more specific one stays (a key found by its provider's pattern
# over the same key as a high-entropy string; a card number over a phone number).
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}


@functools.cache
def _phone_region() -> str:
    return os.environ.get(PHONE_REGION_ENV) or DEFAULT_PHONE_REGION


def scan(text: str, *, region: str | None = None) -> list[Detection]:
    """The secrets and personal data in a text, in order, without overlaps."""
    if not isinstance(text, str) or not text:
        return []
    region = region or _phone_region()
    found = [*_secrets(text), *_personal(text, region)]
    if not found:
        return []
    found = sorted(set(found), key=lambda item: (_RANK[item[0]], item[1] - item[2], item[1]))
    kept: list[tuple[str, int, int]] = []
    for kind, start, end in found:
        if start < end and all(end <= other_start or start >= other_end for _, other_start, other_end in kept):
            kept.append((kind, start, end))
    kept.sort(key=lambda item: item[1])
    return [
        Detection(kind, start, end, mask(text[start:end], kind), digest_of(text[start:end]))
        for kind, start, end in kept
    ]


def redact(text: str, detections: Iterable[Detection]) -> str:
    """The text with each detection's span replaced by `[REDACTED:<kind>]`."""
    out, position = [], 0
    for detection in sorted(detections, key=lambda d: d.start):
        if detection.start < position:
            continue
        out.append(text[position : detection.start])
        out.append(REDACTION.format(kind=detection.kind))
        position = detection.end
    out.append(text[position:])
    return "".join(out)


def refusal(detections: Iterable[Detection]) -> ValueError:
    """The error a refused write raises: it names the kinds found, never the values."""
    kinds = sorted({detection.kind for detection in detections})
    names = ", ".join(f"{KINDS[kind]} ({kind})" for kind in kinds)
    return ValueError(f"content holds sensitive data: {names}; {POLICY_ENV} is refuse, so nothing was stored")
