# Two commands matter: `make demo` and `make test`. Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast test-spark wheel-check model lint typecheck bench labels clean docs

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: train, deduplicate and evaluate on the bundled data
demo: $(STAMP)
	$(BIN)/jobdedup demo --out out/demo

## test: run the test suite (the Spark engine's tests included; they need Java 17+)
test: $(STAMP)
	$(BIN)/python -m pytest

## test-fast: the inner loop: every test but the slow, Spark, service and browser tiers (under 2 minutes)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not spark and not service and not browser"

## test-spark: only the Spark engine's tests (local[2]; also part of `make test`)
test-spark: $(STAMP)
	$(BIN)/python -m pytest -m spark

## wheel-check: build the wheel, check its contents, install it into a fresh venv (in a temporary
## folder) and run `jobdedup demo` and one `dedup` from it outside the repository (.ci/run runs it)
wheel-check: $(STAMP)
	BUILD_PYTHON=$(BIN)/python PYTHON=$(PYTHON) .ci/wheel-check

## model: retrain the bundled default model reproducibly from every bundled labelled set
## (train and test splits and the later natural rounds: the held-out figures in README come from
## the demo's train-only model)
model: $(STAMP)
	$(BIN)/jobdedup train --ads data/train_ads.parquet --labels data/train_labels.parquet --weight 1 \
		--ads data/natural_train_ads.parquet --labels data/natural_train_pairs.csv --weight 0.5 \
		--ads data/test_ads.parquet --labels data/test_labels.parquet --weight 1 \
		--ads data/natural_test_ads.parquet --labels data/natural_test_pairs.csv --weight 0.5 \
		--ads data/natural_late_ads.parquet --labels data/natural_pairs_late.csv --weight 0.5 \
		--model models/default/model.json --seed 1 --force --quiet

## labels: regenerate the bundled labelled sample from ../shared (needs the real corpus)
labels: $(STAMP)
	$(BIN)/python -m labelling.make_labels --ads ../shared/data/real_ads.parquet --out data --n-base 940 --seed 13
	$(BIN)/python -m labelling.natural_bundle --ads ../shared/data/real_ads.parquet --ads ../shared/data/more_ads.parquet --out data
	$(BIN)/python -m labelling.make_labels --ads ../shared/data/real_ads.parquet --out out/labels_full --n-base 0

## lint: ruff check and format check (ruff 0.17.6, installed on demand), then `make typecheck`
lint: $(STAMP)
	$(BIN)/python -m pip install --quiet ruff==0.17.6
	$(BIN)/python -m ruff check jobdedup pipeline features models data labelling tests benchmarks setup.py
	$(BIN)/python -m ruff format --check jobdedup pipeline features models data labelling tests benchmarks setup.py
	$(MAKE) --no-print-directory typecheck

## typecheck: mypy over pipeline/, features/ and models/ under their installed names jobdedup.*
## (mypy 2.4.1, installed on demand; settings in pyproject.toml). mypy cannot see the editable
## install's import hook, so the folders are linked into $(VENV)/typecheck/jobdedup/ first.
TYPECHECK := $(VENV)/typecheck/jobdedup
typecheck: $(STAMP)
	$(BIN)/python -m pip install --quiet mypy==2.4.1
	mkdir -p $(TYPECHECK)
	ln -sfn $(CURDIR)/jobdedup/__init__.py $(TYPECHECK)/__init__.py
	for folder in pipeline features models data; do ln -sfn $(CURDIR)/$$folder $(TYPECHECK)/$$folder; done
	$(BIN)/python -m mypy -p jobdedup.pipeline -p jobdedup.features -p jobdedup.models

clean:
	rm -rf out .pytest_cache

## bench: dedup beside the plain datasketch way at 50k ads, and on the stress corpus at 200k and 1M
## (needs ../shared; ~20 min on 2 cores, and 5 more to build the corpora the first time)
bench: $(STAMP)
	test -f out/labels_full/test_ads.parquet || \
		$(BIN)/python -m labelling.make_labels --ads ../shared/data/real_ads.parquet --out out/labels_full --n-base 0
	$(BIN)/python -m benchmarks.bench --plot benchmarks/scaling.png

## docs: regenerate docs/cli.md from the parsers and build the documentation site strictly into out/site
## (mkdocs 1.6.1 and mkdocs-material 9.8.2, installed on demand; the same pins as pyproject's `docs` extra)
docs: $(STAMP)
	$(BIN)/python -m pip install --quiet mkdocs==1.6.1 mkdocs-material==9.8.2
	$(BIN)/python docs/gen_cli.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict
