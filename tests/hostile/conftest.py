"""Fixtures of the hostile corpus's tests: the API's persona clients (tests/api/conftest.py) and
the dashboard tests' small world, into which the corpus is written."""

import pytest

from tests.api.conftest import curator_api, viewer_api  # noqa: F401
from tests.web.world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)
