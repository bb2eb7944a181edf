"""Lamar for llamaindex (in progress)."""
