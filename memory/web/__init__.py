"""The HTTP plumbing of the Django side, under both front doors: forms and list filters, the field
rules forms and the API's serializers share, access by role, API tokens, the id converter, the
middleware and context processors, login throttling, and the engine's errors as field errors."""
