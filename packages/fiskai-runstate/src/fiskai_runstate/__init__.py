"""The fiskai run journal: append-only records folded into a resumable run state.

A leaf library: imports no fiskai package. The JetStream backend lives in `fiskai_runstate.jetstream`
(extra `nats`) and is not imported here, so this package never needs nats-py. The typed `harness.sessions`
options live in `fiskai_runstate.options`, for the one caller that reads configuration.
"""

from ._codec import decode_record, encode_record
from .errors import (
    FieldChange,
    InvalidRunIdError,
    JournalConfigError,
    JournalCorruptError,
    JournalError,
    JournalExistsError,
    JournalLockedError,
    JournalNotFoundError,
    JournalTruncatedError,
    JournalVersionError,
    ProviderChangedError,
    RecordTooLargeError,
    ResumeError,
    ResumeMismatchError,
    SequenceGapError,
)
from .file import FileJournal, FileJournalStore, default_runs_dir
from .fingerprint import Fingerprint, check_resume, sha256_json
from .json_schemas import schema_documents
from .records import (
    MAX_RECORD_BYTES,
    SCHEMA_VERSION,
    AssistantRecord,
    JsonObject,
    JsonValue,
    MetaRecord,
    Record,
    TerminalReason,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
    args_digest,
    effect_id,
    tool_use_ids,
)
from .state import Counters, PendingBatch, RunState, fold
from .store import Journal, RunSummary, Store, check_append, validate_run_id

__all__ = [
    "MAX_RECORD_BYTES",
    "SCHEMA_VERSION",
    "AssistantRecord",
    "Counters",
    "FieldChange",
    "FileJournal",
    "FileJournalStore",
    "Fingerprint",
    "InvalidRunIdError",
    "Journal",
    "JsonObject",
    "JsonValue",
    "JournalConfigError",
    "JournalCorruptError",
    "JournalError",
    "JournalExistsError",
    "JournalLockedError",
    "JournalNotFoundError",
    "JournalTruncatedError",
    "JournalVersionError",
    "MetaRecord",
    "PendingBatch",
    "ProviderChangedError",
    "Record",
    "RecordTooLargeError",
    "ResumeError",
    "ResumeMismatchError",
    "RunState",
    "RunSummary",
    "SequenceGapError",
    "Store",
    "TerminalReason",
    "TerminalRecord",
    "ToolIntentRecord",
    "ToolResultRecord",
    "UserRecord",
    "args_digest",
    "check_append",
    "check_resume",
    "decode_record",
    "default_runs_dir",
    "effect_id",
    "encode_record",
    "fold",
    "schema_documents",
    "sha256_json",
    "tool_use_ids",
    "validate_run_id",
]
