"""`DecodeCounter`: how many times fiskai code decodes a given piece of JSON (tests of the one-decode rule).

Counts calls, made from fiskai code, of fiskai's decoders (`loads_exact`, `parse_arguments`, `decode_prefix`,
wherever a fiskai module bound them by name) and of the standard library's `json.loads`, whose input holds
a marker (a number as a model wrote it, say). A decoder called by another counts once, as the outer call.
Decodes by third-party code (an SDK reading its own wire) and by the test doubles of a `testing` module (a
scripted model server reading the next request) are not fiskai's and are not counted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from fiskai_core import _exact_json, _gojson
from fiskai_core.tools import _arguments  # pyright: ignore[reportPrivateUsage]

__all__ = ["DecodeCounter"]

Patch = Callable[[object, str, object], None]
"""How to replace an attribute for the length of a test (`pytest.MonkeyPatch.setattr`)."""


class DecodeCounter:
    """Wraps the decoders through `patch`; `seen` lists the name of each counted decode, in order."""

    __test__ = False

    def __init__(self, patch: Patch, marker: bytes) -> None:
        self.seen: list[str] = []
        self._marker = marker
        self._depth = 0
        for original in (_exact_json.loads_exact, _arguments.parse_arguments, _gojson.decode_prefix):
            counting = self._counting(original, original.__name__, fiskai_only=False)
            for name, module in list(sys.modules.items()):
                if name.startswith("fiskai_"):
                    for attribute, value in list(vars(module).items()):
                        if value is original:
                            patch(module, attribute, counting)
        patch(json, "loads", self._counting(json.loads, "json.loads", fiskai_only=True))

    def _counting(self, original: Callable[..., Any], label: str, *, fiskai_only: bool) -> Callable[..., Any]:
        def counting(*args: Any, **kwargs: Any) -> Any:
            data = args[0] if args else kwargs.get("s")
            if isinstance(data, str):
                data = data.encode("utf-8", "surrogatepass")
            caller = str(sys._getframe(1).f_globals.get("__name__", ""))  # pyright: ignore[reportPrivateUsage]
            # A fiskai `testing` module stands in for the world outside (a model server): not fiskai's decode.
            ours = not fiskai_only or (caller.startswith("fiskai_") and ".testing" not in caller)
            if ours and self._depth == 0 and isinstance(data, bytes | bytearray) and self._marker in data:
                self.seen.append(label)
            self._depth += 1
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1

        return counting
