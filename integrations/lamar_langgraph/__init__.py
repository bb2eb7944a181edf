"""Lamar for langgraph (in progress)."""
