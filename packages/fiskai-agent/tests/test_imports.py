"""The provider SDK costs seconds to import: nothing but a starting run may load it."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_agent_api_does_not_import_the_sdk() -> None:
    code = (
        "import sys, fiskai_agent, fiskai_agent.llm, fiskai_agent.events, fiskai_agent.testing\n"
        "print(sorted(m for m in sys.modules if m == 'anthropic' or m.startswith(('anthropic.', 'httpx'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_creating_the_provider_imports_the_sdk() -> None:
    code = (
        "import sys\n"
        "from fiskai_agent.llm import ProviderSettings, create_provider\n"
        "create_provider('anthropic', ProviderSettings(model='m', api_key='k'))\n"
        "print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "True"
