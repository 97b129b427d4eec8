"""Django settings of the server bench/api.py starts: the site's own, over the benchmark's
temporary database, with the URLs of bench/_api_urls.py (the site's plus the trivial baseline
endpoint). Nothing here ships: the product's settings and URLs have no benchmark endpoint."""

import os

from oam_site.settings import *  # noqa: F403

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OAM_BENCH_DATABASE"]}}
ROOT_URLCONF = "bench._api_urls"
