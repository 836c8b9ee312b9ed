# The two commands a newcomer needs (README.md):
#   make run    installs what is missing and starts the console with a demo account and letters
#   make test   runs the tests (extra pytest arguments: make test ARGS="-k replay")
#   make lint   runs ruff and mypy (pyproject.toml)
.PHONY: run test lint bootstrap services

ARGS ?=

run:
	scripts/run

test:
	scripts/test $(ARGS)

lint:
	scripts/lint

bootstrap:
	scripts/bootstrap

services:
	scripts/services
