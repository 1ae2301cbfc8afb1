"""The `fiskai` console-script entry point: start-up tuning before anything heavy loads.

Start-up creates tens of thousands of long-lived objects (click, pydantic models and their schemas)
and the cyclic garbage collector would rescan them again and again while they load: about a quarter of
`fiskai info`'s wall time on a small machine. Collection stays off until the subcommand's module has
loaded (see `_lazy._load`), then everything loaded so far is frozen out of future collections and
collection resumes for the command's own work.
"""

import gc


def main() -> None:
    """Run the `fiskai` command."""
    gc.disable()
    # Imported here, not at the top, so the collector is already off while click and the root load.
    from ._root import main as run

    run()
