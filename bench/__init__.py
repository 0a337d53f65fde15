"""Benchmarks that print figures beside a named peer (docs/performance.md); each runs as a
module, ``python -m bench.NAME``, and imports nothing from the tests."""
