# One target per job; `make help` lists them. Everything runs from the project's .venv.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# Installed with apt; then docs whose packages drag heavy dependencies, only unpacked.
DOC_PACKAGES := python-requests-doc mkdocs-doc python-flask-doc python-celery-doc cargo-doc \
	git-doc libpam-doc lmdb-doc python-typer-doc postgresql-doc-15 python-django-doc \
	python3.11-doc chromium
DOC_EXTRACT_PACKAGES := rust-doc libcommons-lang3-java-doc libglib2.0-doc nodejs-doc libghc-aeson-doc \
	sbcl-doc
URL     ?=
OUT     ?=
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

.PHONY: help setup fixtures crawl demo lock layer openapi test test-unit test-contract test-integration test-infra test-e2e lint bench synth deploy destroy clean

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv with mdcrawl and the dev tools

fixtures: ## install the Debian packages the tests need (docs sites to crawl, chromium)
	.ci/fixtures.sh $(DOC_PACKAGES) -- $(DOC_EXTRACT_PACKAGES)

crawl: setup ## crawl URL=... (default: the requests docs served on 127.0.0.1)
ifeq ($(URL),)
	$(MAKE) --no-print-directory fixtures
	$(BIN)/python -m tests.support.demo $(if $(OUT),--out $(OUT))
else
	$(BIN)/mdcrawl crawl "$(URL)" $(if $(OUT),--out $(OUT))
endif

test: setup fixtures ## lint, then run every test tier
	$(BIN)/ruff check --quiet .
	$(BIN)/pytest -q -n 2 -p no:cacheprovider

test-unit: setup
	$(BIN)/pytest -q tests/unit
test-contract: setup
	$(BIN)/pytest -q tests/contract
test-integration: setup fixtures
	$(BIN)/pytest -q tests/integration
test-infra: setup
	$(BIN)/pytest -q tests/infra
test-e2e: setup fixtures
	$(BIN)/pytest -q tests/e2e

lint: setup ## ruff
	$(BIN)/ruff check .

bench: setup fixtures ## benchmarks: printed ratios, never asserted
	$(BIN)/python -m bench.crawl
	$(BIN)/python -m bench.retrieval
	$(BIN)/python -m bench.coldstart

# The Lambda runtime of infra/pipeline.py (RUNTIME, ARCHITECTURE); tests/infra checks it.
LAMBDA_PYTHON   := 3.13
LAMBDA_PLATFORM := aarch64-manylinux2014

lock: setup ## resolve layers/deps/requirements.txt into requirements.lock (hashes) for Lambda
	$(BIN)/uv pip compile layers/deps/requirements.txt --quiet --generate-hashes \
		--python-version $(LAMBDA_PYTHON) --python-platform $(LAMBDA_PLATFORM) \
		--custom-compile-command "make lock" --output-file layers/deps/requirements.lock

layer: setup ## build the dependency layer from the lock (pip --require-hashes) into cdk.out/layer
	$(BIN)/python -m infra.bundling cdk.out/layer

openapi: setup ## write docs/openapi.yaml's JobRequest and Options from the options model
	$(BIN)/python -m mdcrawl.service.schema docs/openapi.yaml

synth: setup ## synthesize the CDK app into cdk.out
	$(BIN)/python app.py

deploy: setup ## cdk deploy to the account in your AWS credentials
	npx --yes aws-cdk@2.1148.1 deploy --app "$(BIN)/python app.py"

destroy: setup
	npx --yes aws-cdk@2.1148.1 destroy --app "$(BIN)/python app.py"

clean:
	rm -rf $(VENV) cdk.out .pytest_cache mdcrawl-out
