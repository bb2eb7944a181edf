"""Lamar for langchain (in progress)."""
