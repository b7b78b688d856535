"""Helpers shared by the test modules (a test module never imports another): each module here is named by what
it provides. Fixtures shared by several modules live in tests/conftest.py."""
