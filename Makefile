# nbsvm: `make imdb` and `make test` work on a fresh machine (they create .venv and install).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NBSVM := $(VENV)/bin/nbsvm

.PHONY: kernels startup lint soak test-slow all install install-bench install-plot install-fuzz fuzz test imdb imdb-table blitzer wang-manning robustness learn-defaults imbalanced quantize scale serve-bench limits predict-bench rcv1 iris reproduce data bench docs clean

all: test

# Packages install with uv (from PyPI, into the venv, itself installed there by pip): it
# resolves, downloads and unpacks in parallel where pip works one package at a time (the
# test tools on a fresh clone: 9 s, or 40 s byte-compiled, against pip's 144 s; the same
# versions). --compile-bytecode as pip does: where PYTHONDONTWRITEBYTECODE is set, every
# process would otherwise compile numpy, numba... from source at each start. The test tools
# alone install as they are: make test writes the bytecode of what its processes import
# (a part of the tools' files), once.
UV := $(VENV)/bin/uv
# uv into the venv by the interpreter's own pip (a venv with pip of its own takes 9 s to
# make, one without 0.2 s; pip then comes from uv), else by the venv's pip
GET_UV = $(PYTHON) -m pip --python $(PY) install --quiet uv 2>/dev/null \
	|| { $(PYTHON) -m venv $(VENV) && $(PY) -m pip install --quiet uv; }
INSTALL := $(UV) pip install --quiet --compile-bytecode --python $(PY)
INSTALL_TEST_TOOLS := $(UV) pip install --quiet --python $(PY)

# the run-time dependencies first (make test compiles the kernels with them while the test
# tools install), then nbsvm itself with the test tools
$(VENV)/.installed-core: pyproject.toml
	rm -f $(VENV)/.installed
	$(PYTHON) -m venv --without-pip $(VENV)
	$(GET_UV)
	$(INSTALL) pip
	$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" > $(VENV)/core-requirements.txt
	$(INSTALL) -r $(VENV)/core-requirements.txt
	touch $@

# a venv made before the installs went through uv gets it at its next install
$(UV): | $(VENV)/.installed-core
	$(GET_UV)

# The kernels of a first run with the default settings (lexicon, train, eval, predict)
# compile into numba's cache when the venv is made, so that no first run compiles them
# (nbsvm.workflows.compile_ahead --defaults: 12 s on 2 cores, where make imdb's first run
# spent 7 s of its 17 compiling); `make kernels` compiles them again (after an upgrade of
# numba, say). They compile in the background, beside the test tools' install and make
# data-*'s unpacking, holding a lock on $(KERNELS).lock that the targets running nbsvm wait
# for (WAIT_KERNELS; the system drops the lock however the compilation ends, and a second
# one started meanwhile does nothing). make test compiles those and more itself
# (tests/warm_kernels.py) and turns this off: COMPILE_KERNELS=0.
COMPILE_KERNELS ?= 1
KERNELS := $(VENV)/compile-kernels
COMPILE_DEFAULTS = PYTHONPATH=$(CURDIR) $(PY) -m nbsvm.workflows.compile_ahead --defaults \
	--lock $(KERNELS).lock
$(VENV)/.installed: $(VENV)/.installed-core | $(UV)
	@if [ "$(COMPILE_KERNELS)" != 0 ]; then $(COMPILE_DEFAULTS) > $(KERNELS).log 2>&1 & fi
	$(INSTALL_TEST_TOOLS) -e '.[test]'
	touch $@

# waits while a compilation holds the lock, then says how it went (once)
WAIT_KERNELS = @$(PY) -c "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'a'), fcntl.LOCK_EX)" \
	$(KERNELS).lock; if [ -f $(KERNELS).log ]; then cat $(KERNELS).log; rm -f $(KERNELS).log; fi

install: $(VENV)/.installed
	$(WAIT_KERNELS)

kernels: install
	$(COMPILE_DEFAULTS)

$(VENV)/.installed-bench: $(VENV)/.installed | $(UV)
	$(INSTALL) -e '.[test,bench]'
	touch $@

install-bench: $(VENV)/.installed-bench
	$(WAIT_KERNELS)

# matplotlib for the PNG plots of the reproductions (never a runtime dependency)
$(VENV)/.installed-plot: $(VENV)/.installed | $(UV)
	$(INSTALL) -e '.[test,plot]'
	touch $@

install-plot: $(VENV)/.installed-plot
	$(WAIT_KERNELS)

$(VENV)/.installed-fuzz: $(VENV)/.installed | $(UV)
	$(INSTALL) -e '.[test,fuzz]'
	touch $@

install-fuzz: $(VENV)/.installed-fuzz
	$(WAIT_KERNELS)

# coverage-guided fuzzing of every reader and loader (atheris); FUZZ_SECONDS per target
FUZZ_SECONDS ?= 60
fuzz: install-fuzz
	$(PY) tests/reliability/fuzz.py --seconds $(FUZZ_SECONDS)

# The corpora (nbsvm.datasets knows them all): `make data` unpacks every one into data/,
# `make data-NAME` one (imdb, 20newsgroups, blitzer, rcv1, iris, subj, mpqa,
# rt_polarity_2k), from the shared datasets folder with each archive's sha256 checked, or
# IMDB from its official download. A corpus unpacked before is left as it is.
data: install
	$(PY) -m nbsvm datasets get all

# (the kernels compile beside the unpacking: make imdb waits for them after it)
data-%: $(VENV)/.installed
	$(PY) -m nbsvm datasets get $*

imdb: $(VENV)/.installed data-imdb
	$(WAIT_KERNELS)
	$(PY) pipelines/imdb.py

# Reproductions of published tables (results/<name>.md and .csv; README "Reproductions")
imdb-table: install data-imdb
	$(PY) pipelines/imdb_table.py

blitzer: install
	$(PY) pipelines/blitzer.py

# Size, load time and accuracy of quantized IMDB and 20NG models (results/quantize.md)
quantize: install-bench data-imdb
	$(PY) pipelines/quantize.py

# Class weights on IMDB with one positive for nine negatives (results/imbalanced.md)
imbalanced: install-bench data-imdb
	$(PY) pipelines/imbalanced.py

# Wang & Manning 2012 Tables 2-3 beside nbsvm and scikit-learn (results/wang_manning.md)
wang-manning: install-bench
	$(PY) pipelines/wang_manning.py

# nbsvm (defaults and auto) beside scikit-learn and fastText on every shape of text the
# shared corpora give: short/long, binary/multi-class, imbalanced, few documents, no spaces,
# Unicode-heavy (results/robustness.md; about 25 minutes on 2 cores)
robustness: install-bench
	$(PY) pipelines/robustness.py

# nbsvm learn's step-size settings on 14 shapes of data as features (the robustness shapes,
# RCV1, iris) beside scikit-learn (results/learn_defaults.md; about 20 minutes)
learn-defaults: install-bench
	$(PY) pipelines/learn_defaults.py

# 1M and 4M generated reviews: nbsvm beside Vowpal Wabbit and fastText, a memory-capped
# run (results/scale.md; about 40 GB of disk under results/tmp/scale while it runs)
scale: install-bench
	$(PY) pipelines/scale.py

# nbsvm serve under load on the IMDB model (results/serve_bench.md; the load from wrk): 1/8/64 clients, single
# texts and batches of 64, beside nbsvm predict; then 10,000 malformed requests
serve-bench: install data-imdb
	command -v wrk >/dev/null && command -v chromium >/dev/null || \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk chromium) || \
	    (echo "make serve-bench needs wrk (the load) and chromium (the page): apt-get install wrk chromium"; exit 1)
	[ -f models/imdb-3gram-24b.npz ] || $(PY) pipelines/imdb.py
	$(PY) pipelines/serve_bench.py
	$(PY) pipelines/serve_page.py

rcv1: install
	$(PY) pipelines/rcv1.py

iris: install-plot
	$(PY) pipelines/iris_ogd.py

# all of the above, each timed (results/reproduce.md)
reproduce: install-plot data-imdb
	$(PY) pipelines/reproduce.py

# the commands people run from the shell (help, info, an argument error, predict of 10
# reviews, train and eval of 200) as whole processes, medians of 5 (results/startup.md; 1 min)
startup: install data-imdb
	$(PY) pipelines/startup.py

# each stage of the IMDB job (read, hash, epoch, score, save) beside the bound a bare kernel
# gives on this machine, one and two threads (results/limits.md; about 2 minutes)
limits: install data-imdb
	$(PY) pipelines/limits.py

# nbsvm predict beside fastText's and Vowpal Wabbit's prediction of IMDB test, whole
# processes (results/predict_bench.md; about 3 minutes)
predict-bench: install-bench data-imdb
	$(PY) pipelines/predict_bench.py

# nbsvm beside Vowpal Wabbit, fastText and scikit-learn on the IMDB trigram job (results/bench.md)
bench: install-bench data-imdb
	$(PY) pipelines/bench.py
	$(PY) pipelines/bench_dask.py
	$(PY) pipelines/bench_20ng.py
	$(PY) pipelines/bench_multilabel.py

# the documentation site (mkdocs.yml, docs/): MkDocs + Material + mkdocstrings, the docs extra
# (never a runtime dependency), built with --strict into site/
$(VENV)/.installed-docs: $(VENV)/.installed | $(UV)
	$(INSTALL) -e '.[docs]'
	touch $@

docs: $(VENV)/.installed-docs
	$(PY) -m mkdocs build --strict --site-dir site

# two pytest-xdist workers (the 2-core machines), one test file each at a time (module
# fixtures built once)
TEST_WORKERS ?= 2
# the kernels compile once into numba's cache (tests/warm_kernels.py, from the source tree)
# while the test tools install, not once per worker; make lint (one core, mostly mypy) runs
# beside them and the tests, its report printed after theirs, and fails make test as they
# do; it runs niced, as the kernels' compilation is one process and the longest path
# (91 s against 134 s beside a lint of the same priority). A collection of the tests runs
# beside the kernels too: it writes the bytecode of what the test files import (scipy,
# scikit-learn, schemathesis, distributed: 1,500 modules), which both pytest-xdist workers
# otherwise compiled at once while collecting (36 s before the first test on a fresh clone,
# 11 s after it; make test 351 -> 337 s). Every process of make test
# writes the bytecode of the modules it imports, even where PYTHONDONTWRITEBYTECODE is set
# (CI's environment), so that each module compiles once, not at every process start.
# (SUBMAKE: through a variable, as a recipe line naming $(MAKE) runs even under make -n.)
SUBMAKE = $(MAKE) --no-print-directory
test: $(VENV)/.installed-core
	@export PYTHONDONTWRITEBYTECODE=; \
	$(PY) -m compileall -q nbsvm pipelines tests > /dev/null; \
	PYTHONPATH=$(CURDIR) $(PY) tests/warm_kernels.py & warm=$$!; \
	$(SUBMAKE) install COMPILE_KERNELS=0 || { kill $$warm; exit 1; }; \
	$(PY) -m pytest -q --collect-only -p no:cacheprovider > /dev/null 2>&1 & collect=$$!; \
	nice -n 10 $(SUBMAKE) lint > $(VENV)/lint.log 2>&1 & lint=$$!; \
	wait $$warm || { kill $$lint $$collect; exit 1; }; wait $$collect; \
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile; tests=$$?; \
	wait $$lint; linted=$$?; cat $(VENV)/lint.log; \
	if [ $$linted -ne 0 ]; then echo "make lint failed (above)"; exit 1; fi; exit $$tests

# the layer contracts of pyproject.toml ([tool.importlinter]; docs/design.md draws them),
# ruff's lint and formatting ([tool.ruff]), mypy's types ([tool.mypy])
lint: install
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check nbsvm
	$(VENV)/bin/ruff format --check nbsvm
	$(VENV)/bin/mypy

# the long streaming runs left out of make test (tests marked soak: 2 GB through predict)
soak: install
	$(PY) -m pytest -q -m soak

# the tests make test leaves out (marked slow: over 1.5 s, further real-data runs, the
# guides' shell sessions); .ci/run runs them after make test
test-slow: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m slow

clean:
	rm -rf $(VENV) models results/tmp .pytest_cache
