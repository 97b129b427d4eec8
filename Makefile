# One command each to set up, run, test, lint, document and benchmark. See docs/development.md.
#
# The virtualenv is built with the first Python >= 3.12 found (Django 6 needs it); override with
# `make PYTHON=/path/to/python3.12 ...`. Requirements are reinstalled only when their files change.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Stamps record which requirements the venv holds; make compares their times with the files'.
RUNTIME_STAMP := $(VENV)/.installed-requirements
DEV_STAMP := $(VENV)/.installed-requirements-dev

PYTHON ?=
PYTHON_CANDIDATES := python3.13 python3.12 \
	$(sort $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3 /root/.pyenv/versions/3.1[2-9]*/bin/python3))
RUNSERVER_ADDR ?= 127.0.0.1:8000
DOCS_ADDR ?= 127.0.0.1:8001
LOADTEST_SECONDS ?= 60

# Prints the first candidate that actually runs and is >= 3.12 (pyenv shims exist but may fail).
define find_python
for candidate in $(if $(PYTHON),$(PYTHON),$(PYTHON_CANDIDATES)); do \
	if "$$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then \
		echo "$$candidate"; exit 0; \
	fi; \
done; \
echo "error: no Python >= 3.12 found (tried: $(if $(PYTHON),$(PYTHON),$(PYTHON_CANDIDATES)))." >&2; \
echo "Install one, or pass it explicitly: make PYTHON=/path/to/python3.12 <target>" >&2; \
exit 1
endef

.PHONY: help venv run serve test test-quick lint format bench vendor screenshots loadtest docs docs-serve

help:
	@echo "make run     set up, migrate, seed demo data, start http://$(RUNSERVER_ADDR)/ (login demo/demo)"
	@echo "make serve   production: migrate, collectstatic, gunicorn on OAM_BIND (docs/deploy.md)"
	@echo "make test    manage.py check, makemigrations --check, lint-imports, pytest"
	@echo "make test-quick  pytest without the slow and browser tests (a few minutes)"
	@echo "make lint    ruff check + ruff format --check + lint-imports (the layering: pyproject.toml)"
	@echo "make bench   run every bench/*.py"
	@echo "make loadtest  locust against gunicorn (2 workers) over a seeded store for LOADTEST_SECONDS (60)"
	@echo "make venv    create .venv and install requirements.txt"
	@echo "make vendor  npm ci, then copy the files the site serves to static/vendor/ (committed)"
	@echo "make screenshots  seed a throwaway site, save docs/screenshots/*.png of docs/screenshots.py's PAGES"
	@echo "make docs    build the documentation site (docs/, mkdocs.yml) into site/, offline, --strict"
	@echo "make docs-serve  serve the documentation with live reload at http://$(DOCS_ADDR)/"

venv: $(RUNTIME_STAMP)

$(PY):
	@python="$$($(find_python))"; \
	echo "Creating $(VENV) with $$python ($$("$$python" --version))"; \
	"$$python" -m venv $(VENV)
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))' || { \
		echo "error: $(VENV) runs $$($(PY) --version); Django 6 needs >= 3.12. Remove $(VENV) and retry." >&2; \
		exit 1; }

$(RUNTIME_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(DEV_STAMP): requirements-dev.txt $(RUNTIME_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --if-empty
	$(PY) manage.py ensure_demo_user
	$(PY) manage.py runserver $(RUNSERVER_ADDR)

# Production (docs/deploy.md): deploy/serve.sh migrates, collects the static files and runs
# gunicorn (oam_site/gunicorn.conf.py: OAM_BIND, OAM_WORKERS, OAM_THREADS) with DEBUG off.
serve: venv
	exec deploy/serve.sh

test: $(DEV_STAMP)
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run
	$(BIN)/lint-imports
	$(BIN)/pytest

# The loop while coding: no process-spawning, long-corpus or browser test (`make test` runs all).
test-quick: $(DEV_STAMP)
	$(BIN)/pytest -m "not slow and not browser"

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(DEV_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

screenshots: $(DEV_STAMP)
	$(PY) docs/screenshots.py

# The documentation site (mkdocs.yml): --strict fails on any warning (a broken link or anchor, a page
# left out of the nav). It needs no network: no web fonts, the search is built in.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr $(DOCS_ADDR)

bench: $(DEV_STAMP)
	@shopt -s nullglob; scripts=(bench/[!_]*.py); \
	if [ $${#scripts[@]} -eq 0 ]; then echo "no benchmarks in bench/"; exit 0; fi; \
	for script in "$${scripts[@]}"; do \
		echo "== $$script"; PYTHONPATH=$(CURDIR) $(PY) "$$script"; \
	done

# A bounded load on loopback (bench/loadtest.py): figures per endpoint, and a non-zero exit on any error.
loadtest: $(DEV_STAMP)
	PYTHONPATH=$(CURDIR) $(PY) bench/loadtest.py --seconds $(LOADTEST_SECONDS)

# The front-end libraries the site serves, as "<file in node_modules/>=<file in static/vendor/>",
# each under its npm package's name. Versions: package.json / package-lock.json. The copies are
# committed, so the app runs without npm; `make vendor` rebuilds them from scratch, byte for byte.
VENDOR_FILES := \
	bootstrap/dist/css/bootstrap.min.css=bootstrap/css/bootstrap.min.css \
	bootstrap/dist/css/bootstrap.min.css.map=bootstrap/css/bootstrap.min.css.map \
	bootstrap/dist/js/bootstrap.bundle.min.js=bootstrap/js/bootstrap.bundle.min.js \
	bootstrap/dist/js/bootstrap.bundle.min.js.map=bootstrap/js/bootstrap.bundle.min.js.map \
	bootstrap/LICENSE=bootstrap/LICENSE \
	htmx.org/dist/htmx.min.js=htmx.org/htmx.min.js \
	htmx.org/LICENSE=htmx.org/LICENSE \
	bootstrap-icons/font/bootstrap-icons.min.css=bootstrap-icons/bootstrap-icons.min.css \
	bootstrap-icons/font/fonts/bootstrap-icons.woff2=bootstrap-icons/fonts/bootstrap-icons.woff2 \
	bootstrap-icons/font/fonts/bootstrap-icons.woff=bootstrap-icons/fonts/bootstrap-icons.woff \
	bootstrap-icons/LICENSE=bootstrap-icons/LICENSE \
	cytoscape/dist/cytoscape.min.js=cytoscape/cytoscape.min.js \
	cytoscape/LICENSE=cytoscape/LICENSE

vendor:
	npm ci --ignore-scripts --no-audit --no-fund
	rm -rf static/vendor
	@for pair in $(VENDOR_FILES); do \
		install -D -m 644 "node_modules/$${pair%%=*}" "static/vendor/$${pair#*=}"; \
	done
	@echo "static/vendor/: $(words $(VENDOR_FILES)) files copied"
