"""The fiskai run journal: append-only records folded into a resumable run state.

A leaf library: imports no fiskai package. The top level holds what a caller that journals and resumes runs
needs; everything else is importable from the public module that defines it:

- `fiskai_runstate.store`: the `Store` and `Journal` seams, `RunSummary`, `check_append`, `validate_run_id`.
- `fiskai_runstate.file`: `FileJournalStore`, `FileJournal`, `default_runs_dir`.
- `fiskai_runstate.records`: `Record` and its payloads (`MetaRecord`, `AssistantRecord`, `ToolIntentRecord`,
  `ToolResultRecord`, `UserRecord`, `TerminalRecord`, `TerminalReason`), `JsonObject`, `JsonValue`,
  `args_digest`, `effect_id`, `tool_use_ids`, `MAX_RECORD_BYTES`, `SCHEMA_VERSION`.
- `fiskai_runstate.state`: `fold`, `RunState`, `PendingBatch`, `Counters`.
- `fiskai_runstate.fingerprint`: `Fingerprint`, `check_resume`, `sha256_json`.
- `fiskai_runstate.errors`: the `JournalError` and `ResumeError` trees.
- `fiskai_runstate.json_schemas`: `schema_documents` (the records' JSON Schemas).
- `fiskai_runstate.options`: the typed `harness.sessions` parsers, for the one caller that reads configuration.
- `fiskai_runstate.inspection`: `session_stats`, `query_calls` (`fiskai session stats|query`), lock-free folds.
- `fiskai_runstate.session_search`: `search_sessions`, `SearchFilter` (`fiskai session search`).
- `fiskai_runstate.gate_log`: what the gate decided in a run, read back from its records.
- `fiskai_runstate.jetstream`: the JetStream backend (extra `nats`); not imported here, so this package never
  needs nats-py.
- `fiskai_runstate.testing`: `InMemoryJournalStore`, the backend contract suite, sample records.
- `fiskai_runstate.crashtest`: the SIGKILL soak.
"""

from ._codec import decode_record, encode_record
from .errors import JournalError, JournalNotFoundError, JournalTruncatedError, ResumeError
from .file import FileJournalStore
from .fingerprint import Fingerprint, check_resume, sha256_json
from .records import Record
from .state import PendingBatch, RunState, fold
from .store import Journal, RunSummary, Store

__all__ = [
    "FileJournalStore",
    "Fingerprint",
    "Journal",
    "JournalError",
    "JournalNotFoundError",
    "JournalTruncatedError",
    "PendingBatch",
    "Record",
    "ResumeError",
    "RunState",
    "RunSummary",
    "Store",
    "check_resume",
    "decode_record",
    "encode_record",
    "fold",
    "sha256_json",
]
