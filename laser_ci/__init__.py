"""laser-ci: predict GitHub Actions job runtimes from the workflow text, before CI runs."""

__version__ = "1.0.0"
