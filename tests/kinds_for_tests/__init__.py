"""Kinds of job that live only in the tests (registered by the test that uses one)."""
