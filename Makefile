# theorylab: the two commands of the README are `make demo` and `make test`; both set up from a bare clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= results

.PHONY: setup demo test test-slow bench gallery clean

$(STAMP): pyproject.toml constraints-cpu.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps whynot==0.12.0
	touch $(STAMP)

setup: $(STAMP)  ## create .venv with every dependency (CPU torch pinned)

demo: $(STAMP)  ## quick validation suite: table on stdout, report + figures under $(OUT)/
	$(BIN)/theorylab validate --quick --out $(OUT)

test: $(STAMP)  ## fast test suite (slow and GPU tests are skipped with a reason)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)  ## also the long statistical tests
	$(BIN)/python -m pytest -q --runslow

bench: $(STAMP)  ## speed benchmarks (ratios against baselines measured in the same run)
	$(BIN)/python benchmarks/fedavg_quadratic.py

gallery: $(STAMP)  ## re-render every figure into figures/gallery
	$(BIN)/theorylab figure --all --out figures/gallery

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache *.egg-info
