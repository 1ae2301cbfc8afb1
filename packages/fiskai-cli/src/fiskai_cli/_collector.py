"""The garbage collector's part in start-up: off while modules load (`_entry`), back on for the work.

Its own module so that the lazy group, which turns it back on once a subcommand has loaded, does not
import the entry point that turned it off.
"""

import gc

__all__ = ["resume_collection"]


def resume_collection() -> None:
    """Freeze what start-up loaded out of future collections and turn the collector back on (idempotent)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
