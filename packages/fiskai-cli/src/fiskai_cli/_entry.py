"""The `fiskai` console-script entry point, and the one start-up trick that measurably pays.

The trick: the cyclic garbage collector stays off while click, the root group, pydantic and the
subcommand's module load (tens of thousands of long-lived objects it would rescan again and again),
then everything loaded so far is frozen out of future collections and collection resumes for the
command's own work (`fiskai_cli._collector.resume_collection`, called by the lazy group once the subcommand has loaded).

Worth it, measured with `bench/startup.py` (medians of 15 interleaved runs on 2 cores, bytecode
cached): `fiskai -c example info` 147 ms with it, 177 ms without (the bench's "collector on" row, which
keeps checking). Turning it off before click loads (this package's `__init__` now imports nothing, so it
really is off) measured the same as turning it off after click, within noise: the gain is in pydantic and
the subcommand. Nothing else is tuned: no import hooks, no `-X` flags.
"""

import gc


def main() -> None:
    """Run the `fiskai` command."""
    gc.disable()
    # Imported here, not at the top: the collector must be off before click and the root group load.
    from ._root import main as run

    run()
