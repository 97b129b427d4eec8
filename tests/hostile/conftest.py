"""The API's persona clients (tests/api/conftest.py) for the hostile corpus's API tests."""

from tests.api.conftest import curator_api, viewer_api  # noqa: F401
