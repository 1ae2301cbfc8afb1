# pyright: basic
"""An optparse app: abbreviations cannot be turned off, so fiskai refuses it."""

import optparse


def main():
    parser = optparse.OptionParser()
    parser.add_option("--delete-all", action="store_true")
    parser.parse_args()
