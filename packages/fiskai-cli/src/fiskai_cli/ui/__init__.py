"""How the `fiskai` command presents things: plain-text tables and sections that pipe cleanly."""
