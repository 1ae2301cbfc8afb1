"""The fiskai run journal: append-only records folded into a resumable run state.

A leaf library: imports no fiskai package. The JetStream backend lives in `fiskai_runstate.jetstream`
(extra `nats`) and is not imported here, so this package never needs nats-py.
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
from .options import (
    KNOWN_BACKENDS,
    FileOptions,
    JetStreamOptions,
    check_backend,
    parse_file_options,
    parse_jetstream_options,
)
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
    "KNOWN_BACKENDS",
    "MAX_RECORD_BYTES",
    "SCHEMA_VERSION",
    "AssistantRecord",
    "Counters",
    "FieldChange",
    "FileJournal",
    "FileOptions",
    "FileJournalStore",
    "Fingerprint",
    "InvalidRunIdError",
    "Journal",
    "JsonObject",
    "JsonValue",
    "JetStreamOptions",
    "JournalConfigError",
    "JournalCorruptError",
    "JournalError",
    "JournalExistsError",
    "JournalLockedError",
    "JournalNotFoundError",
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
    "check_backend",
    "check_resume",
    "decode_record",
    "default_runs_dir",
    "effect_id",
    "encode_record",
    "fold",
    "parse_file_options",
    "parse_jetstream_options",
    "schema_documents",
    "sha256_json",
    "tool_use_ids",
    "validate_run_id",
]
