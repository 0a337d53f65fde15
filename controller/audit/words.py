"""Every sentence the audit log's checks say, named once (English, each detail ``{detail}``):
what `mjtable audit verify` finds (a break of the chain, a seal, a head, a record the table did
not write; its warnings), what a start finds after a clean close or an unclean end, and why a
log, a record or a heads file cannot be read. The checks (records.py, verify.py, runs.py,
heads.py, files.py) make their words from them, and the technician's commands translate them as
they come (cli/lang.py), as they do the table's.

A sentence made of others (a break's place and its problem, an unclean end and what became of
its records) names each part as a detail; the parts are sentences of this list too."""

from __future__ import annotations

# where a break is
BREAK_AT = "{file} line {line}: {problem}"
BREAK_AT_SEQ = "{file} line {line} (seq {seq}): {problem}"

# one line that is not a record (records.parse_line)
NOT_ASCII = "not ASCII (byte {at})"
BAD_JSON = "bad JSON ({error} at column {column})"
BAD_JSON_DEEP = "bad JSON (nested too deeply)"
NOT_AN_OBJECT = "not a JSON object"
MISSING_FIELDS = "missing field(s) {fields}"
UNEXPECTED_FIELDS = "unexpected field(s) {fields}"
BAD_SEQ = "seq {value} is not a non-negative integer"
BAD_TIME = "time {value} is not UTC ISO (YYYY-MM-DDTHH:MM:SS.ffffffZ)"
BAD_KIND = "kind {value} is not a name"
DATA_NOT_AN_OBJECT = "data is not a JSON object"
BAD_PREV = "prev is not a SHA-256 in lower-case hex"
BAD_HASH = "hash is not a SHA-256 in lower-case hex"
BAD_CYCLE = "cycle {value} is not a non-empty string"
BAD_MONO = "mono {value} is not a non-negative integer"
NOT_CANONICAL = "not in canonical form (key order, spacing or escapes were changed)"
HASH_ALTERED = "hash does not match the record's content (the record was altered)"

# the chain (verify.py)
CHAIN_STARTS_LATE = "the chain starts at seq {seq}, not 0: the older files of the chain are missing"
SEQ_GAP = "seq gap: expected {expected}, found {seq} (records are missing)"
SEQ_BACK = "seq goes back: expected {expected}, found {seq} (records reordered or repeated)"
PREV_ALTERED = (
    "prev does not match the SHA-256 of the previous record (a record before it was altered, "
    "removed or reordered)"
)
GENESIS = "the first record must have the genesis prev (64 zeros)"
ROTATED_INSIDE = "a rotated record that is not the first of a file"
TORN_LAST = (
    "torn last line ({bytes} bytes without a newline): the service sets it aside as a "
    "torn_tail at its next start"
)
TORN_LAST_OFF = (
    "torn last line ({bytes} bytes without a newline) after the clean close at seq {closed}: "
    "written while the table was off (its next start sets it aside and records it)"
)
EMPTY_FILE = "an empty file inside the chain"
NOT_ROTATED_FIRST = "the file does not start with a rotated record (found {record_kind})"
ROTATED_ALTERED = "rotated record: the SHA-256 of {file} does not match (the file was altered)"
ROTATED_COUNT = "rotated record: {file} should hold {said} records, it holds {count}"
CANNOT_READ = "cannot read {path}: {why}"

# the seals
SEAL_EPOCH = (
    "seal of epoch {got} where epoch {epoch} was expected (seals were removed, repeated or "
    "reordered)"
)
SEAL_KEY_CHANGED = "seal of epoch {epoch} names key {name}, the seals before it {before}"
SEAL_COUNT = (
    "seal of epoch {epoch} covers {got} records, the log holds {since} since the previous "
    "seal (records were removed or added)"
)
OTHER_KEY = (
    "sealed with the key of fingerprint {name}, not with the verification key given "
    "(fingerprint {given}): a typo, or another table's key"
)
SEAL_FORGED = (
    "seal of epoch {epoch} does not match the verification key: the records it covers "
    "({span}) or the seal itself were altered, or it was forged"
)
NO_RECORD = "no record"
NO_SEAL = (
    "no seal record in the log: nothing in it is proved by the key (written before sealing, "
    "without a key, or rewritten)"
)
UNSEALED_IDENTITY = (
    "config_loaded names table {table} but no seal covers it, and the sealed records name "
    "table {sealed}: the table seals its configuration as soon as it is loaded, so this record was "
    "added after the last seal (the table's identity, which picks the floor's heads, is taken "
    "from sealed records only)"
)
UNSEALED_IDENTITY_NO_TABLE = (
    "config_loaded names table {table} but no seal covers it, and the sealed records name no "
    "table: the table seals its configuration as soon as it is loaded, so this record was added "
    "after the last seal (the table's identity, which picks the floor's heads, is taken from "
    "sealed records only)"
)
DEAL_UNSEALED = (
    "seq {seq}: the deal of cycle {cycle} is not sealed, though the table seals each deal at "
    "once: it was added after the last seal, unless the table stopped in that instant"
)

# the torn tails set aside
UNMENTIONED_TORN = (
    "{file} holds a torn tail that no torn_tail record mentions (power cut while it was being "
    "set aside): keep it with the log"
)
TORN_FILE_MISSING = (
    "seq {seq}: the torn tail file {file} is missing ({bytes} bytes were set aside there)"
)
TORN_FILE_UNREADABLE = "seq {seq}: cannot read {file}: {why}"
TORN_FILE_ALTERED = "seq {seq}: {file} does not match the SHA-256 recorded for it"

# the floor's heads
HEAD = "the floor's head of seq {seq} received {at} (line {line})"
HEAD_BEYOND = "{head} is beyond the log's last record (seq {last}): records were cut off the end"
HEAD_REWRITTEN = (
    "{head} does not match this record (hash {theirs}…, the record's {ours}…): the log was "
    "rewritten here or before"
)
HEADS_UNREADABLE = "cannot read the heads file {path}: {why}"
HEADS_BAD_JSON = "{file} line {line}: bad JSON ({error})"
HEADS_NOT_A_HEAD = "{file} line {line}: expected an object with table, seq, hash, at"
HEADS_BAD_SEQ = "{file} line {line}: seq {value} is not a record number"
HEADS_BAD_HASH = "{file} line {line}: hash is not a SHA-256 in hex"
HEADS_OF_TABLES = "the heads file holds heads of tables {tables}: name the table (--table N)"
HEADS_NONE = "the heads file holds no head"
HEADS_NONE_OF = "the heads file holds no head of table {table}"
HEADS_NONE_OF_AMONG = (
    "the heads file holds no head of table {table} (it holds heads of tables {tables})"
)
HEADS_OF_SEALED = (
    "{error}; table {table} is the table the log's sealed records name: give the heads the "
    "floor kept of this table, or name the table (--table N)"
)
HEADS_NO_SEALED = "{error}; the log's sealed records name no table"

# finding the log
NO_LOG_IN = "no audit log (*.jsonl) in the directory {path}"
SEVERAL_LOGS = "several audit logs in {path} ({names}): name the file to check"
NO_LOG_AT = "no audit log at {path} (nor rotated files {name}.1, ...)"

# runs: what lies after a clean close, what a start after an unclean end found
OFF = "{records} record(s) written while the table was off, after the clean close at seq {closed}"
OFF_ONE = (
    "{records} record(s) written while the table was off, after the clean close at seq "
    "{closed} (seq {first})"
)
OFF_SPAN = (
    "{records} record(s) written while the table was off, after the clean close at seq "
    "{closed} (seq {first}..{last})"
)
OFF_TORN = (
    "a torn line of {torn} byte(s) written while the table was off, after the clean close at "
    "seq {closed}"
)
OFF_AND_TORN = "{said}, and a torn line of {torn} byte(s) after them"
NOT_THE_TABLE_S = "{said}: not written by the table; {then}"
FOUND_THEM = "the table found them at its start (seq {at})"
FOUND_IT = "the table found it at its start (seq {at})"
NO_OPENING = "sealed at seq {seq} without the opening seal the table begins each run with"
NOT_STARTED_THEM = "the table has not started since (its next start records them)"
NOT_STARTED_IT = "the table has not started since (its next start records it)"
UNCLEAN = (
    "the previous run ended without a clean close (a crash, a power cut or a kill) after seq "
    "{last}; {what}"
)
SEALED_NOW = (
    "the {records} record(s) after its last seal (seq {sealed}) are sealed now on the table's "
    "word alone"
)
NOTHING_UNSEALED = "nothing was left unsealed after its last seal (seq {sealed})"
TORN_SET_ASIDE = "{said}; a torn line of {torn} byte(s) was set aside"
STARTED_AGAIN = (
    "seq {opening}: the table started again after an unclean end (no clean close after seq "
    "{last}: a crash, a power cut or a kill); {what}"
)
SEALED_AT_START = (
    "the {records} record(s) after its last seal (seq {first}..{last}) were sealed at that "
    "start on the table's word alone"
)
HEADS_CAN_CONFIRM = "{said} (the floor's heads can confirm them: --heads)"
NO_HEAD_COVERS = "{said}; no floor head covers them"
HEADS_CONFIRM_ALL = "{said}; the floor's heads confirm them all (its head of seq {top})"
HEADS_CONFIRM_SOME = (
    "{said}; the floor's heads confirm them up to seq {top}, not seq {next}..{last}"
)

#: every sentence, the ones made of others first (a sentence is matched in order)
AUDIT_SENTENCES = (
    NOT_THE_TABLE_S,
    STARTED_AGAIN,
    UNCLEAN,
    HEADS_OF_SEALED,
    HEADS_NO_SEALED,
    OFF_AND_TORN,
    TORN_SET_ASIDE,
    HEADS_CAN_CONFIRM,
    NO_HEAD_COVERS,
    HEADS_CONFIRM_ALL,
    HEADS_CONFIRM_SOME,
    HEAD_BEYOND,
    HEAD_REWRITTEN,
    NOT_ASCII,
    BAD_JSON,
    BAD_JSON_DEEP,
    NOT_AN_OBJECT,
    MISSING_FIELDS,
    UNEXPECTED_FIELDS,
    BAD_SEQ,
    BAD_TIME,
    BAD_KIND,
    DATA_NOT_AN_OBJECT,
    BAD_PREV,
    BAD_HASH,
    BAD_CYCLE,
    BAD_MONO,
    NOT_CANONICAL,
    HASH_ALTERED,
    CHAIN_STARTS_LATE,
    SEQ_GAP,
    SEQ_BACK,
    PREV_ALTERED,
    GENESIS,
    ROTATED_INSIDE,
    TORN_LAST,
    TORN_LAST_OFF,
    EMPTY_FILE,
    NOT_ROTATED_FIRST,
    ROTATED_ALTERED,
    ROTATED_COUNT,
    HEADS_UNREADABLE,
    CANNOT_READ,
    SEAL_EPOCH,
    SEAL_KEY_CHANGED,
    SEAL_COUNT,
    OTHER_KEY,
    SEAL_FORGED,
    NO_RECORD,
    NO_SEAL,
    UNSEALED_IDENTITY_NO_TABLE,
    UNSEALED_IDENTITY,
    DEAL_UNSEALED,
    UNMENTIONED_TORN,
    TORN_FILE_MISSING,
    TORN_FILE_UNREADABLE,
    TORN_FILE_ALTERED,
    HEAD,
    HEADS_OF_TABLES,
    HEADS_NONE,
    HEADS_NONE_OF_AMONG,
    HEADS_NONE_OF,
    NO_LOG_IN,
    SEVERAL_LOGS,
    NO_LOG_AT,
    OFF_SPAN,
    OFF_ONE,
    OFF,
    OFF_TORN,
    FOUND_THEM,
    FOUND_IT,
    NO_OPENING,
    NOT_STARTED_THEM,
    NOT_STARTED_IT,
    SEALED_NOW,
    NOTHING_UNSEALED,
    SEALED_AT_START,
    # last: "{file} line {line}: {problem}" would take a problem's own words for a file
    HEADS_BAD_JSON,
    HEADS_NOT_A_HEAD,
    HEADS_BAD_SEQ,
    HEADS_BAD_HASH,
    BREAK_AT_SEQ,
    BREAK_AT,
)
