"""The fiskai_core exception tree.

Harness failures are exceptions; outcomes a model should see (a non-zero exit, arguments that do not
fit a command) are `ToolResult` values, never raised past the tool.

    FiskaiError
    +-- ConfigError            agent.yaml is unreadable or invalid (names the key path, file and line)
    +-- IntrospectionError     a fisk binary did not produce a usable command model
    +-- ArgumentsError         tool arguments cannot become an argv (turned into an in-band result)
    |   +-- MissingArgumentsError  required parameters are absent (checked before anything else)
    +-- ToolSelectionError     an include/exclude rule is invalid
    +-- CommandError           a command could not run to completion (turned into an in-band result)
        +-- CommandStartError      the binary is missing, not executable, or the work dir is unusable
        +-- CommandTimeoutError    the time limit ran out; the process group was killed
"""

from __future__ import annotations

__all__ = [
    "ArgumentsError",
    "CommandError",
    "CommandStartError",
    "CommandTimeoutError",
    "ConfigError",
    "FiskaiError",
    "IntrospectionError",
    "MissingArgumentsError",
    "ToolSelectionError",
]


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


class MissingArgumentsError(ArgumentsError):
    """A call leaves out required parameters; the message is fisk-ai's pre-check text."""

    def __init__(self, message: str, *, missing: tuple[str, ...]) -> None:
        super().__init__(message)
        self.missing = missing
        """The absent parameters, in schema order."""


class ToolSelectionError(FiskaiError):
    """An include or exclude rule cannot be applied (for example an invalid regular expression)."""


class CommandError(FiskaiError):
    """A command could not run to completion; a non-zero exit is never one of these.

    `str(error)` is fisk-ai's in-band error text, `running command "<path>": <reason>`, ready to be a tool
    result with `is_error` set.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        """The binary as it was to be executed (the argv's first element)."""
        self.reason = reason
        """What went wrong, without the binary's name."""
        super().__init__(f'running command "{path}": {reason}')


class CommandStartError(CommandError):
    """The binary could not be started: missing, not executable, a directory, or a bad working directory."""


class CommandTimeoutError(CommandError):
    """The command outlived its time limit; its whole process group was killed and its output dropped."""
