# The two commands a newcomer needs (README.md):
#   make run    installs what is missing and starts the console with a demo account and letters
#   make test   runs the tests in parallel, as CI does (extra pytest arguments: make test ARGS="-k replay")
#   make test-fast  the tests that need no broker, browser or Spark, for the edit loop
#   make lint   runs ruff and mypy (pyproject.toml)
.PHONY: run test test-fast lint bootstrap services

ARGS ?=

run:
	scripts/run

test:
	scripts/test $(ARGS)

test-fast:
	scripts/test --fast $(ARGS)

lint:
	scripts/lint

bootstrap:
	scripts/bootstrap

services:
	scripts/services
