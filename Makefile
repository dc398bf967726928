# nbsvm: `make imdb` and `make test` work on a fresh machine (they create .venv and install).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NBSVM := $(VENV)/bin/nbsvm
# the shared corpora beside this checkout, or where CI's clone can reach them
SHARED ?= $(firstword $(wildcard ../shared/datasets /work/shared/datasets) ../shared/datasets)
IMDB_TAR := $(SHARED)/imdb/aclImdb_labeled.tar.gz
IMDB_SHA256 := 3c7d06d26560475e8a57d0901ee9561546adbf9c9530f1d1cc5345e410b9463a
IMDB_URL := https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz

.PHONY: soak all install install-bench install-plot install-fuzz fuzz test imdb imdb-table blitzer wang-manning imbalanced quantize scale serve-bench rcv1 iris reproduce data-imdb bench clean

all: test

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

$(VENV)/.installed-bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

install-bench: $(VENV)/.installed-bench

# matplotlib for the PNG plots of the reproductions (never a runtime dependency)
$(VENV)/.installed-plot: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,plot]'
	touch $@

install-plot: $(VENV)/.installed-plot

$(VENV)/.installed-fuzz: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,fuzz]'
	touch $@

install-fuzz: $(VENV)/.installed-fuzz

# coverage-guided fuzzing of every reader and loader (atheris); FUZZ_SECONDS per target
FUZZ_SECONDS ?= 60
fuzz: install-fuzz
	$(PY) tests/reliability/fuzz.py --seconds $(FUZZ_SECONDS)

# The corpus: data/aclImdb if present, else the shared archive (sha256 checked), else the
# official download. The unlabeled train/unsup part of the download is not extracted.
data/aclImdb/train/pos:
	@mkdir -p data
	@if [ -f "$(IMDB_TAR)" ]; then \
	  echo "unpacking $(IMDB_TAR)"; \
	  echo "$(IMDB_SHA256)  $(IMDB_TAR)" | sha256sum --check --quiet || { echo "sha256 mismatch: $(IMDB_TAR)"; exit 1; }; \
	  tar -xzf "$(IMDB_TAR)" -C data; \
	else \
	  echo "downloading $(IMDB_URL)"; \
	  curl -fL --retry 3 -o data/aclImdb_v1.tar.gz "$(IMDB_URL)"; \
	  tar -xzf data/aclImdb_v1.tar.gz -C data --exclude='aclImdb/train/unsup' --exclude='*.feat'; \
	  rm -f data/aclImdb_v1.tar.gz; \
	fi
	@test -d $@

data-imdb: data/aclImdb/train/pos

imdb: install data-imdb
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

# nbsvm beside Vowpal Wabbit, fastText and scikit-learn on the IMDB trigram job (results/bench.md)
bench: install-bench data-imdb
	$(PY) pipelines/bench.py
	$(PY) pipelines/bench_dask.py
	$(PY) pipelines/bench_20ng.py
	$(PY) pipelines/bench_multilabel.py

test: install
	$(PY) -m pytest -q

# the long streaming runs left out of make test (tests marked soak: 2 GB through predict)
soak: install
	$(PY) -m pytest -q -m soak

clean:
	rm -rf $(VENV) models results/tmp .pytest_cache
