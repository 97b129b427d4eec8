#!/usr/bin/env bash
# Production start (make serve, and systemd's ExecStart): Django's tables and the cache table,
# the static files collected (hashed names, compressed), then gunicorn in place of this shell, so
# that a service manager's signals reach it (SIGTERM: finish the requests in flight; SIGHUP:
# reload the workers). DEBUG is off unless OAM_DEBUG says otherwise, so OAM_SECRET_KEY is needed.
# docs/deploy.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export OAM_DEBUG="${OAM_DEBUG:-false}"
bin="${OAM_VENV:-.venv}/bin"

"$bin/python" manage.py migrate --noinput
"$bin/python" manage.py createcachetable
"$bin/python" manage.py collectstatic --noinput --verbosity 0
exec "$bin/gunicorn" -c oam_site/gunicorn.conf.py oam_site.wsgi
