"""`fiskai session export ID`: a run's records as JSON lines, as journaled or (`--go`) as the Go agent writes them."""

from __future__ import annotations

from pathlib import Path

import click

from fiskai_runstate import encode_record

__all__ = ["export"]


@click.command("export")
@click.argument("run_id")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this new file instead of stdout (an existing file is never overwritten).",
)
@click.option(
    "--go",
    "go_format",
    is_flag=True,
    help="Write a journal the Go agent reads: its record formats only (no fiskai-only records or fields, "
    "meta version 3, renumbered). Save it as <id>.json in the Go agent's runs directory to resume it there.",
)
@click.pass_context
def export(ctx: click.Context, run_id: str, output: Path | None, go_format: bool) -> None:
    """Write a run's records as JSON lines, exactly as journaled (or as the Go agent writes them).

    \b
    Examples:
      fiskai session export orders-report > orders-report.jsonl
      fiskai session export orders-report -o orders-report.jsonl
      fiskai session export --go orders-report -o ~/.local/state/fisk-ai/runs/orders-report.json
    """
    from fiskai_cli.commands.session import load_records  # the group's module imports this one

    records = load_records(ctx, run_id)
    if go_format:
        from fiskai_runstate.go_export import go_journal

        lines = go_journal(records)
    else:
        lines = [encode_record(r) for r in records]
    data = b"".join(line + b"\n" for line in lines)
    if output is None:
        click.echo(data, nl=False)
        return
    try:
        with output.open("xb") as out:
            out.write(data)
    except FileExistsError:
        raise click.ClickException(f"{output} already exists; choose a new file name") from None
    except OSError as err:
        raise click.ClickException(f"writing {output}: {err.strerror or err}") from err
    click.echo(f"Exported {len(lines)} records of session {run_id} to {output}", err=True)
