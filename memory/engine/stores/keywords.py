"""Keyword analysis and BM25 postings for the SQLite store's in-memory keyword ranking.

Texts become terms the way a search engine's analyser makes them: Unicode-normalised, accents
removed, case-folded, split into words and stemmed (Snowball English, via PyStemmer). Queries
also drop English function words, which carry no topic and would otherwise match every record.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from datetime import datetime

import numpy as np
import Stemmer

_WORD = re.compile(r"\w+")
_STEMMER = Stemmer.Stemmer("english")
_MONTHS = "january february march april may june july august september october november december".split()  # noqa: SIM905

# Function words dropped from queries. "may" and "will" stay: they are also a month and a name.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    of off on once only or other ought our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren hasn haven hadn won wouldn couldn shouldn
    also yes yeah oh hey hi
    """.split()  # noqa: SIM905
)


def _fold(text: str) -> str:
    if text.isascii():  # nothing to decompose: the common case, at a fraction of the cost
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    return _WORD.findall(_fold(text))


def stems(tokens: list[str]) -> list[str]:
    return _STEMMER.stemWords(tokens)


def query_words(text: str) -> list[str]:
    """A query's words: without function words, unless it has nothing else."""
    tokens = words(text)
    return [token for token in tokens if token not in STOP_WORDS] or tokens


def query_stems(text: str) -> list[str]:
    """The distinct stems a query searches for."""
    return list(dict.fromkeys(stems(query_words(text))))


def date_words(timestamp: str | None) -> list[str]:
    """A timestamp as the words people use for it ("8 May 2023"), so questions about dates match."""
    if not timestamp:
        return []
    moment = datetime.fromisoformat(timestamp)
    return [str(moment.day), _MONTHS[moment.month - 1], str(moment.year)]


class Vocabulary:
    """Term ids for stems, and the stems of words already seen (stemming is the costly step)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self._word_ids: dict[str, int] = {}

    def term_ids(self, tokens: list[str]) -> list[int]:
        unseen = [token for token in dict.fromkeys(tokens) if token not in self._word_ids]
        for token, stem in zip(unseen, stems(unseen), strict=True):
            self._word_ids[token] = self.ids.setdefault(stem, len(self.ids))
        return [self._word_ids[token] for token in tokens]

    def lookup(self, stem_list: list[str]) -> list[int]:
        return [self.ids[stem] for stem in stem_list if stem in self.ids]


def term_counts(term_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct term ids of one text, in order, and how often each occurs (Counter, not
    np.unique: texts are short, and this runs once per stored record)."""
    counted = sorted(Counter(term_ids).items())
    terms = np.fromiter((term for term, _ in counted), dtype=np.int32, count=len(counted))
    return terms, np.fromiter((count for _, count in counted), dtype=np.float32, count=len(counted))


class Postings:
    """Which rows hold which terms, built in one pass from the rows' terms and counts, given as
    each row's number of terms and all of them one row after another (as CSR stores them).

    Stored as CSR arrays sorted by term, with each term's start offset: `rows_of(term)` is a
    slice, so scoring a query touches only the postings of its terms.
    """

    def __init__(self, lengths: np.ndarray, terms: np.ndarray, counts: np.ndarray) -> None:
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        order = np.argsort(terms, kind="stable")
        terms, self.rows, self.counts = terms[order], rows[order], counts[order]
        self.starts = np.searchsorted(terms, np.arange(int(terms.max(initial=-1)) + 2))

    @classmethod
    def from_arrays(cls, rows: np.ndarray, counts: np.ndarray, starts: np.ndarray) -> Postings:
        """Postings saved as their three arrays (rows, counts, starts)."""
        postings = cls.__new__(cls)
        postings.rows, postings.counts, postings.starts = rows, counts, starts
        return postings

    def rows_of(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        if term + 1 >= len(self.starts):
            return self.rows[:0], self.counts[:0]
        start, end = self.starts[term], self.starts[term + 1]
        return self.rows[start:end], self.counts[start:end]
