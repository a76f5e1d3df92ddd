# Two entry points: `make reproduce` (the main job) and `make test` (the suite).
# Both create a local virtual environment from pyproject.toml on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PEERS  := examples/conformance/peers
PEERS_STAMP := $(PEERS)/node_modules/.package-lock.json

# Coq + mathcomp (ssreflect, and analysis for measures and integrals) for the formal
# proofs (theory/coq), OCaml for the engine model's
# extracted executable (theory/coq/engine); Debian/Ubuntu package names.
COQ_APT := coq libcoq-mathcomp-ssreflect libcoq-mathcomp-analysis ocaml-nox

.PHONY: reproduce test lint bench clean coq-deps docs docs-check

# setuptools announces every editable install with a warning ("Editable installation.
# Please be careful with folders in your working directory with the same name as your
# package"): this layout maps the repository's folders into `vistalab` on purpose,
# so that one notice is filtered here, by its text; every other warning still shows.
PIP := PYTHONWARNINGS="ignore:Editable installation:UserWarning" $(BIN)/python -m pip

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[all,test]'
	touch $(STAMP)

reproduce: $(STAMP)
	$(BIN)/vista-lab reproduce

# In parallel on every core (pytest-xdist; worksteal balances the slow files). The
# suite is deterministic under it: Hypothesis runs derandomized without a database
# (property_tests/conftest.py) and every test writes under its own tmp_path.
test: $(STAMP) coq-deps $(PEERS_STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal

# The JavaScript context managers of the conformance study (examples/conformance/peers,
# pinned by its package-lock.json; about 6 s from the npm registry). Without npm, or if
# the install fails, their tests skip and say how to install them.
$(PEERS_STAMP): $(PEERS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix $(PEERS) --no-audit --no-fund --loglevel=error \
	    || echo "peers: npm ci --prefix $(PEERS) failed (the JavaScript peers' tests will skip)"; \
	else \
	  echo "peers: npm not found; install Node.js and npm, then: npm ci --prefix $(PEERS) (the JavaScript peers' tests will skip)"; \
	fi

# Install Coq when running as root with apt-get (CI on a fresh machine);
# otherwise print one line naming the command, and the formal tests skip.
coq-deps:
	@if command -v coqc >/dev/null 2>&1 && command -v ocamlopt >/dev/null 2>&1 && \
	    [ -d "$$(coqc -where)/user-contrib/mathcomp/ssreflect" ] && \
	    [ -d "$$(coqc -where)/user-contrib/mathcomp/analysis" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "coq: installing $(COQ_APT) with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(COQ_APT) >/dev/null \
	    || echo "coq: apt-get install failed; run: apt-get install -y $(COQ_APT) (formal tests will skip)"; \
	else \
	  echo "coq: coqc/mathcomp/ocamlopt not found; run: sudo apt-get install -y $(COQ_APT) (formal tests will skip)"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest property_tests/test_lint.py

bench: $(STAMP)
	$(PIP) install --quiet -e '.[all,test,bench]'
	status=0; for f in benchmarks/bench_*.py; do $(BIN)/python $$f || status=1; done; exit $$status

# The documentation site: docs/_build/html (warnings are errors; the tutorials are
# executed at build time, offline).
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PIP) install --quiet -e '.[all,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html

# The built site in a real browser: headless Chromium (Debian's chromium) loads the
# home page and a tutorial and fails on console errors; screenshots in docs/_build.
docs-check: docs
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq chromium >/dev/null; }
	$(BIN)/python docs/check_site.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
