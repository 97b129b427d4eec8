"""The REST API v1 (/api/v1/): the engine over HTTP for scripts and agents in any language.

Views stay thin: parse (a serializer, or the dashboard's filter forms), call the engine to read or
the curation service to write, answer with a serializer. Errors are one JSON shape (`errors`).
"""
