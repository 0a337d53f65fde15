"""The table's board emulated behind a real serial line (see docs/simulator.md).

    from simulator.server import SimConfig, SimulatedBoard

Modules: config (SimConfig, Timings), faults (catalogue and spec language), board (BoardModel,
no I/O), server (SimulatedBoard: pty or TCP, one thread), control (BoardControl, the JSON-lines
control channel), cli (`mjtable sim`). Nothing is imported here, so `mjtable --help` stays fast.
"""
