"""The API's JSON, one module per resource: the engine's records under the engine's names, and the
bodies writes accept (common: what they all build on).

Output serializers read the engine's record dataclasses; they also give the OpenAPI schema its
typed responses, so what is documented is what is sent. Times are ISO 8601 strings in UTC, as the
engine stores them.
"""
