"""The fiskai_core exception tree.

Harness failures are exceptions; outcomes a model should see (a non-zero exit, arguments that do not
fit a command) are `ToolResult` values, never raised past the tool.

    FiskaiError
    +-- ConfigError            agent.yaml is unreadable or invalid (names the key path, file and line)
    +-- IntrospectionError     a fisk binary did not produce a usable command model
    +-- ArgumentsError         tool arguments cannot become an argv (turned into an in-band result)
    +-- ToolSelectionError     an include/exclude rule is invalid
"""

from __future__ import annotations

__all__ = ["ArgumentsError", "ConfigError", "FiskaiError", "IntrospectionError", "ToolSelectionError"]


class FiskaiError(Exception):
    """Base of every error fiskai raises on purpose."""


class ConfigError(FiskaiError):
    """The configuration cannot be used; the message names the key, the file, the line and the fix."""


class IntrospectionError(FiskaiError):
    """A fisk binary could not be introspected; the message names the binary and the fix."""


class ArgumentsError(FiskaiError):
    """Model-supplied arguments cannot become an argv for a command.

    The message is fisk's own `ArgsFromJSON` wording where one exists, so a model that knows fisk
    recognizes it; tools return it to the model as an error result instead of raising further.
    """


class ToolSelectionError(FiskaiError):
    """An include or exclude rule cannot be applied (for example an invalid regular expression)."""
