# zarr-catalogue: `make demo` and `make test` are all a new machine needs (Python 3.11+ and make).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PG_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST_ARGS ?= -n 2 -q

EXAMPLES := cf_air_temperature_v3.zarr cf_sea_surface_v2.zarr ocean_model_v3.zarr
DEMO_GRAPH := file://$(CURDIR)/examples/cf_air_temperature_v3.zarr

.PHONY: demo test install dev lint bench bench-sparql bench-remote bench-validate bench-chunks bench-preview bench-web bench-stress bench-search bench-jobs serve serve-background stop clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "zarr-catalogue needs Python 3.11 or newer" or 0)'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip "setuptools>=77"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	@touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e ".[dev]"
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

demo: install
	@for store in $(EXAMPLES); do $(BIN)/catalogue harvest examples/$$store || exit 1; done
	@echo
	@echo "== Datasets and their arrays (SPARQL) =="
	@$(BIN)/catalogue query @examples/datasets.rq
	@echo
	@echo "== The catalogue (catalogue stats) =="
	@$(BIN)/catalogue stats
	@echo
	@echo "== Where and when: <$(DEMO_GRAPH)> =="
	@$(BIN)/catalogue extent "$(DEMO_GRAPH)"
	@echo
	@echo "== Turtle excerpt: <$(DEMO_GRAPH)> =="
	@$(BIN)/catalogue export --format turtle --graph "$(DEMO_GRAPH)" | head -n 40
	@echo "..."
	@echo
	@echo "Catalogue: ./catalogue.db  (try: $(BIN)/catalogue --help)"
	@$(MAKE) --no-print-directory serve-background

# The portal and APIs over ./catalogue.db, in the background (make stop ends it; make serve runs it in the foreground).
DEMO_PORT ?= 8080
serve-background: install
	@$(MAKE) --no-print-directory stop >/dev/null
	@nohup $(BIN)/catalogue serve --port $(DEMO_PORT) > .demo-server.log 2>&1 & echo $$! > .demo-server.pid
	@for i in $$(seq 1 100); do \
	  kill -0 $$(cat .demo-server.pid) 2>/dev/null || { cat .demo-server.log >&2; echo "the portal did not start (port $(DEMO_PORT) taken? make demo DEMO_PORT=8081)" >&2; exit 1; }; \
	  $(BIN)/python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$(DEMO_PORT)/health', timeout=1)" 2>/dev/null && break; \
	  sleep 0.3; \
	done
	@$(BIN)/python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$(DEMO_PORT)/health', timeout=5)" 2>/dev/null \
	  || { echo "the portal does not answer on port $(DEMO_PORT): see .demo-server.log" >&2; exit 1; }
	@echo
	@echo "Portal: http://127.0.0.1:$(DEMO_PORT)/   SPARQL: http://127.0.0.1:$(DEMO_PORT)/sparql   STAC: http://127.0.0.1:$(DEMO_PORT)/stac   API: http://127.0.0.1:$(DEMO_PORT)/docs"
	@echo "(running in the background, log in .demo-server.log; make stop ends it)"

serve: install
	$(BIN)/catalogue serve --port $(DEMO_PORT)

stop:
	@if [ -f .demo-server.pid ]; then kill $$(cat .demo-server.pid) 2>/dev/null || true; rm -f .demo-server.pid; fi

# PostgreSQL tests run whenever a server answers on 127.0.0.1:5432 (CI requires one: .ci/run).
test: dev
	@if [ -z "$$CATALOGUE_TEST_POSTGRES_URL" ] && $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 2).close()" 2>/dev/null; then \
		export CATALOGUE_TEST_POSTGRES_URL="$(PG_URL)"; \
	fi; \
	if [ -n "$$CATALOGUE_TEST_POSTGRES_URL" ]; then echo "PostgreSQL tests: on ($$CATALOGUE_TEST_POSTGRES_URL)"; \
	else echo "PostgreSQL tests: off (nothing answers on 127.0.0.1:5432)"; fi; \
	$(BIN)/pytest $(PYTEST_ARGS)

lint: dev
	$(BIN)/ruff check catalogue migrations schemas tests bench examples

bench: dev
	$(BIN)/python bench/harvest_vs_zarr.py

# SPARQL discovery benchmark (bench/README.md). The data (~170 MB at scale 1) is generated
# into bench/data/ when missing. E.g. make bench-sparql SPARQL_SCALE=0.05 SPARQL_ARGS="--runs 3"
SPARQL_SCALE ?= 1
SPARQL_ARGS ?=
bench-sparql: dev
	$(BIN)/python -m bench.sparql.generate --scale $(SPARQL_SCALE) --if-missing
	$(BIN)/python -m bench.sparql.run --scale $(SPARQL_SCALE) $(SPARQL_ARGS)

# Validation throughput next to harvesting without validation (bench/README.md).
# E.g. make bench-validate VALIDATE_ARGS="--arrays 5000 --groups 50 --no-v2"
VALIDATE_ARGS ?=
bench-validate: dev
	$(BIN)/python bench/validate.py $(VALIDATE_ARGS)

# Chunk resolution (a million chunks) and read throughput next to zarr-python (bench/README.md).
# E.g. make bench-chunks CHUNKS_ARGS="--runs 7 --size-mb 500 --data /tmp/chunks-data"
CHUNKS_ARGS ?=
bench-chunks: dev
	$(BIN)/python bench/chunks.py $(CHUNKS_ARGS)

# Quicklook of a 100 MB array next to reading it (bench/preview.py).
bench-preview: dev
	$(BIN)/python bench/preview.py $(PREVIEW_ARGS)

# Load test of the web server: 50 clients for 20 s on 500 synthetic datasets (bench/web_load.py).
WEB_ARGS ?=
bench-web: dev
	$(BIN)/python -m bench.web_load $(WEB_ARGS)

# Many processes on one catalogue (bench/stress.py): 8 processes for 20 s, SQLite then PostgreSQL.
# E.g. make bench-stress STRESS_ARGS="--seconds 60 --existing"
STRESS_ARGS ?=
bench-stress: dev
	$(BIN)/python -m bench.stress --db sqlite $(STRESS_ARGS)
	$(BIN)/python -m bench.stress --db postgres $(STRESS_ARGS)

# The search index on large catalogues (bench/search_scale.py): the scale-10 catalogue and
# 100,000 datasets with extents, SQLite and PostgreSQL. E.g. SEARCH_ARGS="--catalogues extents --db sqlite"
SEARCH_ARGS ?=
bench-search: dev
	$(BIN)/python -m bench.search_scale $(SEARCH_ARGS)

# catalogue harvest --jobs 1 and 2: 1,000 stores over loopback HTTP into PostgreSQL (bench/harvest_jobs.py).
JOBS_ARGS ?=
bench-jobs: dev
	$(BIN)/python -m bench.harvest_jobs $(JOBS_ARGS)

clean: stop
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache catalogue.db catalogue.db-* .demo-server.log

# HTTP harvest of a 5,000-node store on a loopback server, and a no-change re-harvest (bench/README.md).
bench-remote: dev
	$(BIN)/python bench/harvest_remote.py $(REMOTE_ARGS)
