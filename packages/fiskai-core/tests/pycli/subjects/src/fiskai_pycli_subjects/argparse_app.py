# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false, reportOptionalMemberAccess=false
# ruff: noqa: T201
"""An argparse app with the hazards: abbreviation on, @file expansion, REMAINDER, several values."""

import argparse
import sys


def build_parser():
    parser = argparse.ArgumentParser(prog="subject-argparse", fromfile_prefix_chars="@")
    sub = parser.add_subparsers(dest="command")
    rows = sub.add_parser("rows", help="Show rows.", aliases=["r"])
    rows.add_argument("table")
    rows.add_argument("extra", nargs="*")
    rows.add_argument("--limit", type=int, default=10)
    rows.add_argument("--delete-all", action="store_true", help="Delete every row first.")
    rows.add_argument("--point", nargs=2)
    rows.add_argument("--tag", action="append")
    rows.add_argument("--color", choices=["red", "green"])
    rows.add_argument("--fast", dest="speed", action="store_const", const="fast")
    rows.add_argument("--slow", dest="speed", action="store_const", const="slow")
    rows.add_argument("-q", "--quiet", action="store_true")
    rows.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True)
    rows.add_argument("-v", action="count")
    rows.add_argument("-o")
    run = sub.add_parser("run", help="Run a program.")
    run.add_argument("program")
    run.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def main():
    args = build_parser().parse_args()
    print(vars(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
