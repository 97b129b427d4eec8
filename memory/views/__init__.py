"""Dashboard pages, one module per noun: parse the request, call the engine (reads) or the
curation service (writes), render."""
