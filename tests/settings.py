"""The site's settings for the test suite, with one change: a fast password hasher.

Thousands of tests make a user each, and Django's default PBKDF2 (over a million iterations, by
design) made password hashing most of the suite's time. Only the tests use this; the site keeps
its slow hasher. Processes the tests start (gunicorn, the crash tests' children) use their own.
"""

from oam_site.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
