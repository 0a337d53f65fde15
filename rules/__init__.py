"""Pure game knowledge: the words of the game (``words``), tiles, profiles, dice and breach
counting, the wall ring and the deal (``deal``), the dealt state (``dealt``), hands,
shapes, scoring, payments, the record of a hand and the record of a game (``game``: seats,
Leader, hands, retention, standings; its words in ``lang``). No I/O, no clock, no randomness
it did not receive: every deal and every score can be recomputed from the log
(docs/table.md, docs/rules.md)."""
