"""The full-screen UI of `fiskai run` (prompt-toolkit, the `tui` extra). Imported only when used."""

from fiskai_cli.ui.tui.live import FullScreen

__all__ = ["FullScreen"]
