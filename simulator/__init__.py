"""The table's board simulated behind a real serial line: the firmware on simulated hardware
(see docs/simulator.md).

    from simulator.server import SimConfig, SimulatedBoard

Modules: config (SimConfig), faults (the catalogue), faultspec (the spec language and scenario
files), faultdoc (the catalogue's table in the docs), hardware (SimHal: the firmware's HAL over
the table's physics), sabotage (faults as hardware conditions), machine (the firmware's own main
loop on that hardware; no I/O), server (SimulatedBoard: one thread), transport (the pty or TCP
end of the line), line (noise and cuts), control (BoardControl, the JSON-lines control channel).
Nothing is imported here, so `mjtable --help` stays fast.
"""
