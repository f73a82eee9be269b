"""Perception and expression: what the agent hears, sees between steps, and says."""
