"""Subject apps for fiskai's Python CLI source tests."""
