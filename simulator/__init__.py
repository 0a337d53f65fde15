"""The table's board emulated behind a real serial line (see docs/simulator.md).

    from simulator.server import SimConfig, SimulatedBoard

Modules: config (SimConfig, Timings), faults (catalogue and spec language), board (BoardModel,
no I/O), server (SimulatedBoard: one thread), transport (the pty or TCP end of the line), line
(noise and cuts), control (BoardControl, the JSON-lines control channel). Nothing is imported
here, so `mjtable --help` stays fast.
"""
