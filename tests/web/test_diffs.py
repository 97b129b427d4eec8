"""The word diff of history entries and the near-duplicate page: exact on ordinary edits, and
near-linear in the text's length at any size (content may be a million characters, and any
curator or agent token can store it)."""

from __future__ import annotations

import random
import sys

from memory.queries.diffs import word_diff


def texts(words: int, *, every: int | None = None, vocabulary: int = 5000, seed: int = 7) -> tuple[str, str]:
    """A text of `words` words drawn from a vocabulary of that many, and the same text with every
    `every`-th word (or, without `every`, the middle word) replaced by a word it never uses."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 8))) for _ in range(vocabulary)]
    old = [rng.choice(vocabulary) for _ in range(words)]
    new = list(old)
    for position in range(0, words, every) if every else [words // 2]:
        new[position] = f"EDIT{position}"
    return " ".join(old), " ".join(new)


def sides(pieces) -> tuple[str, str]:
    return (
        "".join(piece.text for piece in pieces if piece.op != "insert"),
        "".join(piece.text for piece in pieces if piece.op != "delete"),
    )


def test_an_edited_sentence_shows_the_words_that_changed_and_keeps_the_rest():
    pieces = word_diff("the cat sat on the mat", "the dog sat on a mat")
    assert [(piece.op, piece.text) for piece in pieces] == [
        ("equal", "the "),
        ("delete", "cat"),
        ("insert", "dog"),
        ("equal", " sat on "),
        ("delete", "the"),
        ("insert", "a"),
        ("equal", " mat"),
    ]


def test_a_megabyte_with_every_fiftieth_word_edited_shows_each_edit_and_nothing_else():
    old, new = texts(170_000, every=50)  # about 1 MB
    assert len(new) > 1_000_000
    pieces = word_diff(old, new)
    assert sides(pieces) == (old, new)
    inserted = [piece.text for piece in pieces if piece.op == "insert"]
    assert inserted == [f"EDIT{position}" for position in range(0, 170_000, 50)]


def test_one_word_changed_in_a_megabyte_is_one_deleted_and_one_inserted_word():
    old, new = texts(170_000)
    pieces = word_diff(old, new)
    assert sides(pieces) == (old, new)
    assert [piece.op for piece in pieces] == ["equal", "delete", "insert", "equal"]
    assert pieces[2].text == "EDIT85000"


def test_texts_without_common_words_are_one_replacement():
    old, new = "a " * 200_000, "b " * 200_000
    pieces = word_diff(old, new)
    assert sides(pieces) == (old, new)
    assert len(pieces) <= 3


def lines_run(call) -> int:
    """How many lines of Python `call` runs: the diff's work, measured without a clock."""
    monitoring = sys.monitoring
    tool = next(tool for tool in range(6) if monitoring.get_tool(tool) is None)
    monitoring.use_tool_id(tool, "diff work")
    count = 0

    def line(code, number):
        nonlocal count
        count += 1

    monitoring.register_callback(tool, monitoring.events.LINE, line)
    monitoring.set_events(tool, monitoring.events.LINE)
    try:
        call()
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    return count


def work_for(words: int) -> int:
    old, new = texts(words, every=50, vocabulary=300)  # every word repeated, at both sizes
    return lines_run(lambda: word_diff(old, new))


def test_the_diffs_work_grows_linearly_with_the_texts_length():
    """Ten times the text, at most about ten times the work (difflib alone: a hundred)."""
    small, large = work_for(3_000), work_for(30_000)
    assert large <= 12 * small, (small, large)
