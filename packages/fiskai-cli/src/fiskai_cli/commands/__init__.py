"""One module per `fiskai` subcommand, each loaded only when its subcommand runs."""
