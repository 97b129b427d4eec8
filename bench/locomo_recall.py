"""Retrieval quality: recall@5 and recall@10 of LoCoMo evidence turns under the default search.

Every turn of every LoCoMo conversation is stored through the public thread API, exactly as an
agent would store it: one thread per conversation (one user id and one agent id each), one
`add_messages` call per session, content "<speaker>: <text>" (plus "[shares a photo: <caption>]"
when the turn shares an image), the session's date as the timestamp and the turn's `dia_id` in
metadata. Each question of categories 1-4 (multi-hop, temporal, open-domain, single-hop) is then
asked with `thread.search(..., exact_thread_match=True)` on a store opened with
`connect("sqlite://:memory:")`, i.e. the default embedder and the default hybrid strategy, so any
gain measured here is one every user gets. recall@k is the fraction of a question's evidence turns
found in its top k results, averaged over the questions that list evidence; evidence ids that name
no turn of the conversation count as missed (a note on stderr lists them). Prints one summary
line on stdout; the target is recall@10 >= 0.60. Timings go to stderr.

The data (CC BY-NC 4.0) is read from ../shared/bench-data/locomo_dev.json, next to the repository;
it is used for this measurement only and never copied into the repository.

    python bench/locomo_recall.py [--data PATH] [--limit-conversations N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import connect

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "locomo_dev.json"
CATEGORIES = (1, 2, 3, 4)
"""Multi-hop, temporal, open-domain, single-hop; 5 (adversarial) has no answer to retrieve."""
KS = (5, 10)
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def session_timestamp(text: str) -> str:
    """ISO-8601 from LoCoMo's session dates, e.g. "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00"."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()


def sessions(conversation: dict) -> list[tuple[int, str, list[dict]]]:
    """(number, ISO timestamp, turns) for each non-empty session, in session order."""
    found = []
    for key, turns in conversation.items():
        match = _SESSION_KEY.match(key)
        if match and isinstance(turns, list) and turns:
            number = int(match.group(1))
            found.append((number, session_timestamp(conversation[f"session_{number}_date_time"]), turns))
    return sorted(found)


def turn_content(turn: dict) -> str:
    """What the turn shows: the speaker's name, the text and, if any, the shared photo's caption."""
    content = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        content += f" [shares a photo: {turn['blip_caption']}]"
    return content


def ingest(memory, sample: dict):
    """One thread holding the sample's conversation; returns it and the set of its dia_ids."""
    conversation = sample["conversation"]
    sample_id = sample["sample_id"]
    roles = {conversation["speaker_a"]: "user", conversation["speaker_b"]: "assistant"}
    thread = memory.create_thread(
        thread_id=f"locomo-{sample_id}", user_id=f"locomo-{sample_id}-user", agent_id=f"locomo-{sample_id}-agent"
    )
    dia_ids: set[str] = set()
    for _, timestamp, turns in sessions(conversation):
        thread.add_messages(
            [
                {
                    "role": roles[turn["speaker"]],
                    "content": turn_content(turn),
                    "timestamp": timestamp,
                    "metadata": {"dia_id": turn["dia_id"]},
                }
                for turn in turns
            ]
        )
        dia_ids.update(turn["dia_id"] for turn in turns)
    return thread, dia_ids


def evaluate(thread, questions: list[dict]) -> list[dict[int, float]]:
    """recall@k per question, for each k in KS."""
    scores = []
    for qa in questions:
        evidence = set(qa["evidence"])
        results = thread.search(qa["question"], max_results=max(KS), exact_thread_match=True, record_types=["message"])
        ranked = [(result.metadata or {}).get("dia_id") for result in results]
        scores.append({k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS})
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo JSON (default: {DEFAULT_DATA})")
    parser.add_argument("--limit-conversations", type=int, default=None, help="use only the first N conversations")
    args = parser.parse_args()
    if not args.data.is_file():
        if args.data != DEFAULT_DATA:
            parser.error(f"no LoCoMo data at {args.data}")
        # The data set sits beside the repository, not in it: a checkout elsewhere has none.
        print(f"locomo: skipped, no data at {args.data} (pass --data PATH)")
        return
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit_conversations is not None:
        samples = samples[: args.limit_conversations]

    memory = connect("sqlite://:memory:")
    scores: list[dict[int, float]] = []
    unknown: list[str] = []
    skipped = turns = 0
    ingest_seconds = search_seconds = 0.0
    for sample in samples:
        started = time.perf_counter()
        thread, dia_ids = ingest(memory, sample)
        ingest_seconds += time.perf_counter() - started
        turns += len(dia_ids)
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            if not qa.get("evidence"):
                skipped += 1
                continue
            questions.append(qa)
            unknown += [f"{sample['sample_id']}:{e!r}" for e in qa["evidence"] if e not in dia_ids]
        started = time.perf_counter()
        scores.extend(evaluate(thread, questions))
        search_seconds += time.perf_counter() - started
    memory.close()

    if not scores:
        parser.error("no question with evidence in the selected conversations")
    recall = {k: sum(s[k] for s in scores) / len(scores) for k in KS}
    print(
        f"locomo: recall@5 {recall[5]:.3f}, recall@10 {recall[10]:.3f} over {len(scores)} questions "
        f"({len(samples)} conversations; default configuration)"
    )
    print(
        f"locomo: {turns} turns ingested in {ingest_seconds:.1f} s, {len(scores)} searches in {search_seconds:.1f} s; "
        f"{skipped} questions without evidence skipped; evidence ids naming no turn (counted as missed): "
        f"{', '.join(unknown) or 'none'}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
