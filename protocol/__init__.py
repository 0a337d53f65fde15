"""The board wire protocol: a sans-I/O engine (bytes in, events out) that also runs under
MicroPython. See docs/protocol.md.

Import each name from its module: ``from protocol.connection import HOST, Connection``,
``from protocol.messages import Shuffle``. The package imports nothing itself: on the board,
importing any of its modules runs this file first, and the board loads only the modules it uses
(not ``codes``, the host's tables of words: it takes the codes as numbers from ``wirecodes``).
The type unions of the events (``LinkEvent``, ``ConnectionEvent``) exist for the type checker
only: import them from ``protocol.events`` under ``if TYPE_CHECKING:``.
"""
