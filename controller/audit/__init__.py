"""The audit wing: the table's tamper-evident history, and what can be proved from it.

Every event that matters (power up, the board's HELLO, each shuffle, the walls as read,
each throw, the dealt state, faults, button presses, ...) is one line of an append-only
file, chained by SHA-256 so that an edited, removed or reordered line is found. See
docs/audit.md for the format and the record kinds. One job per module:

- :mod:`controller.audit.records`: the record: kinds, canonical JSON line, hashes, parsing;
- :mod:`controller.audit.files`: the chain's files (active, rotated, torn tails), read back;
- :mod:`controller.audit.opening`: opening a log: the lock, where the chain goes on, the torn
  tail set aside;
- :mod:`controller.audit.writer`: :class:`~controller.audit.writer.AuditLog`, which holds the
  lock, records what the opening found, appends durable records, rotates files and seals;
- :mod:`controller.audit.runs`: the edges of the table's runs (opening and closing seals) and
  the findings a start records on how the last run ended;
- :mod:`controller.audit.verify`: checking a whole chain and reporting its breaks;
- :mod:`controller.audit.replay`: recomputing a cycle's deal with the pure rules and
  comparing it with what was published;
- :mod:`controller.audit.recovery`: what a restarting service takes back from the log.
"""
