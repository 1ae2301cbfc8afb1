# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false, reportOptionalMemberAccess=false
# ruff: noqa: B008, UP042
"""A typer app: bool pairs, Enum by value, List options, ranges."""

import enum

import typer

app = typer.Typer()


class Color(str, enum.Enum):
    red = "r"
    green = "g"


@app.command()
def hello(
    name: str,
    count: int = typer.Option(1, min=0, max=10),
    color: Color = Color.red,
    tags: list[str] = typer.Option([]),
    force: bool = False,
    ratio: float = 0.5,
    files: list[str] | None = typer.Argument(None),
):
    """Greet someone."""
    typer.echo(f"{name} {count} {color.value} {tags} {force} {ratio} {files}")


@app.command()
def bye(name: str = typer.Option("world", help="Who.")):
    """Say goodbye."""
    typer.echo(f"bye {name}")
