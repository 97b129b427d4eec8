"""Django settings of the servers bench/_gunicorn.py starts (bench/api.py, bench/loadtest.py and
tests/web/test_many_processes.py): the site's own, over a temporary database, with the URLs of
bench/_api_urls.py (the site's plus the trivial baseline endpoint), and every server error logged
to stderr with its traceback (the runs look for 5xx and "database is locked" there). Nothing here
ships: the product's settings and URLs have no benchmark endpoint."""

import os

from oam_site.settings import *  # noqa: F403

DATABASES = {
    "default": {**DATABASES["default"], "NAME": os.environ["OAM_BENCH_DATABASE"]},  # noqa: F405
}
ROOT_URLCONF = "bench._api_urls"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False}},
}
# A temporary site, never collected: static files from the source folders, no manifest (with DEBUG
# off the site's own settings expect `collectstatic`'s hashed names).
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
WHITENOISE_USE_FINDERS = True
