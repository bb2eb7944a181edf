"""Benchmarks: they print figures measured side by side in one run and assert nothing.

The commands and what each measures are listed in docs/speed.md."""
