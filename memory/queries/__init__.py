"""The read models both front doors show: search, the review queues, near-duplicates, the link
graph and its layout, the embedding map, diffs of recorded values, people and the history. They
read the engine and Django's database and change nothing (writes are memory.curation's)."""
