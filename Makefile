# taskmint: `make demo` builds everything and runs the refresh on the bundled seeds;
# `make test` builds everything and runs the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Prefect keeps its ephemeral database under output/, not in the home folder.
export PREFECT_HOME ?= $(CURDIR)/output/prefect
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_LOGGING_LEVEL ?= INFO

.PHONY: setup system-deps test-deps images demo test test-fast bench bench-pypi bench-real bench-cluster bench-rust bench-rust-real exactness lint clean

setup: system-deps $(VENV)/.installed

# Debian packages the sandbox needs: bubblewrap (bwrap), util-linux (setpriv, prlimit), git
# (git apply), nodejs (JavaScript seeds), debootstrap (the docker backend's base image); the
# Rust toolchain and cargo-nextest (Rust seeds).
system-deps:
	@./scripts/install-system-deps.sh
	@./scripts/install-rust-tools.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,dev]'
	touch $@

# The docker backend's base image (debootstrap + docker import; no registry is needed). Cached
# by tag: a machine that has it skips this.
images: setup
	./scripts/build-base-image.sh

demo: setup
	$(VENV)/bin/taskmint refresh

test: setup images test-deps
	$(PY) -m pytest -q --durations=15

# Debian packages the tests alone need (chromium: the report's browser check).
test-deps:
	@./scripts/install-system-deps.sh --tests

# The suite without the tests marked slow (whole seed suites, Prefect flows, installs).
test-fast: setup test-deps
	$(PY) -m pytest -q -m "not slow"

bench: setup
	$(PY) -m pytest -q -s tests/bench -p no:cacheprovider

# The refresh on real PyPI sdists (seed_apps/pypi_seeds.toml): needs the package index.
bench-pypi: setup
	$(PY) -m pytest -q -s tests/bench/test_pypi_seeds.py -p no:cacheprovider

# Real projects nobody here wrote (seed_apps/real_seeds.toml, detected manifests) against plain
# pytest: ids, fixed cost, yield, host seconds per candidate. Needs the package index.
bench-real: setup
	$(PY) -m pytest -q -s tests/bench/test_real_seeds.py -p no:cacheprovider

# The refresh on a 2-process Dask cluster with seeds at once against one process taking them
# in turn: walls, ratio, the same task ids. Needs the package index.
bench-cluster: setup
	$(PY) -m pytest -q -s tests/bench/test_cluster_refresh.py -p no:cacheprovider

# The cargo runner on real crates (acquire, clean and warm builds, against plain cargo test):
# needs the Rust toolchain, cargo-nextest and the Rust crate registry.
bench-rust: setup
	$(PY) -m pytest -q -s tests/bench/test_rust_runner.py -p no:cacheprovider

# The refresh on real crates (seed_apps/real_rust_seeds.toml, detected manifests): usable or
# refused, yield, task sizes, mutation scores, a candidate's cost against plain cargo test.
# Needs the Rust toolchain, cargo-nextest and the Rust crate registry.
bench-rust-real: setup
	$(PY) -m pytest -q -s tests/bench/test_real_rust.py -p no:cacheprovider

# Selected against full-suite validation on the PyPI seeds (needs the package index).
exactness: setup
	$(PY) scripts/selection_exactness.py

lint: setup
	$(VENV)/bin/ruff check src tests scripts flows
	$(VENV)/bin/ruff format --check src tests scripts flows
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf output/cache output/datasets output/prefect
