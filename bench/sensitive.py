"""Ingest throughput with secrets and personal-data detection on and off (engine/sensitive.py).

The same chat-like messages (dates, times, amounts, order numbers and URLs among them; one in a
hundred with a phone number or an email address, one in two hundred with a pasted key, token or
card number) go into a fresh SQLite store in batches
of 500 through `store.add`, embedded by the default hashing embedder, once with the `flag` policy
(every text scanned, findings stored) and once with detection off, interleaved, in the same
process; the best run of each counts. Times are the process's CPU time, so that other work on
the machine does not decide the ratio (both sides write the same rows to the same disk). Prints
one summary line; the target is a cost of 10% or less.

    python bench/sensitive.py [--records 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import HashingEmbedder, SchemaPolicy, SensitivePolicy, SQLiteMemoryStore, scan

BATCH = 500
TARGET = 0.10
SENTENCES = [
    "I moved to Lisbon last spring and I still get lost near the river.",
    "Can you remind me what we decided about the budget for the garden?",
    "My sister visits on {date}; book a table for four somewhere quiet.",
    "The flight lands at {time}, terminal 2, so pick me up after that.",
    "I prefer tea over coffee, and no sugar please.",
    "The invoice was {amount} euros, paid on {date}.",
    "Remember that Tom is allergic to peanuts.",
    "The meeting notes are at https://wiki.example.com/team/notes/{n} if you need them.",
    "We finished chapter {n} of the novel; the ending felt rushed.",
    "The deploy failed twice because the disk was full on node {n}.",
    "Order #{order} should arrive within five working days.",
    "My running pace is down to {pace} per kilometre, thanks for the plan.",
    "Let's keep the Sunday call at 6 pm my time.",
]
PERSONAL = ["Call the plumber at {phone} tomorrow morning.", "Send the draft to {email} before Friday."]
PASTED = [
    "here is the key AKIAIOSFODNN7EXAMPLE, please store it",
    "my card is 4111 1111 1111 1111 exp 12/29",
    "token ghp_" + "x7Yb2" * 7 + "Q",
]


def make_texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        if i % 200 == 199:
            texts.append(rng.choice(PASTED))
            continue
        sentence = rng.choice(PERSONAL) if i % 100 == 49 else rng.choice(SENTENCES)
        text = sentence.format(
            date=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            time=f"{rng.randint(0, 23)}:{rng.randint(0, 59):02d}",
            amount=f"{rng.randint(10, 9000):,}",
            n=rng.randint(1, 400),
            phone=f"+1 415 555 {rng.randint(1000, 9999)}",
            email=f"person{rng.randint(1, 999)}@example.com",
            order=rng.randint(100000, 999999),
            pace=f"{rng.randint(4, 6)}:{rng.randint(0, 59):02d}",
        )
        texts.append(f"{text} ({i})")
    return texts


def time_ingest(path: Path, texts: list[str], policy: SensitivePolicy | None) -> float:
    store = SQLiteMemoryStore(str(path), embedder=HashingEmbedder(384), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    store.sensitive_policy = policy
    started = time.process_time()
    for start in range(0, len(texts), BATCH):
        batch = texts[start : start + BATCH]
        store.add(batch, "message", thread_ids="bench-thread", user_ids="alice", roles="user")
    elapsed = time.process_time() - started
    store.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5, help="interleaved runs of each side; the best counts")
    args = parser.parse_args()
    texts = make_texts(args.records)
    for text in PASTED + PERSONAL:  # phonenumbers loads its metadata on first use
        scan(text)
    started = time.process_time()
    found = sum(len(scan(text)) for text in texts)
    scan_only = time.process_time() - started
    on_times, off_times = [], []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.repeat):
            off_times.append(time_ingest(Path(folder) / f"off{run}.sqlite3", texts, None))
            on_times.append(time_ingest(Path(folder) / f"on{run}.sqlite3", texts, SensitivePolicy.FLAG))
    off, on = min(off_times), min(on_times)
    cost = 1 - off / on
    print(
        f"sensitive: ingest {args.records / on:,.0f} records/s with detection, {args.records / off:,.0f} without, "
        f"cost {cost:.1%} (target <= {TARGET:.0%}; scanning alone {scan_only / args.records * 1e6:.1f} us/text, "
        f"{found} findings in {args.records} chat messages, batches of {BATCH}){'' if cost <= TARGET else ' OVER'}"
    )


if __name__ == "__main__":
    main()
