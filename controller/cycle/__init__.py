"""The deal cycle: one cycle after another over the board link.

    controller.py  CycleController, the one public entry (requests, board events, status)
    states.py      the machine's states as data: one row per state (meaning, deadline, the
                   DONE it waits for, the buttons it accepts, the refusal's words, LEDs)
    deadline.py    the phase deadlines (DEFAULT_DEADLINES) and the timer thread
    faults.py      the controller's own faults as a catalogue: words and advice
    places.py, reconcile.py  where each tile set is, from the board's report; what may be sent
    core.py, guards.py, steps.py, links.py  the cycle's state, its guards and faults, its
                   steps, the link's comings and goings
    reports.py     what the cycle publishes: events, status, command results

Board events arrive typed (protocol.events.ConnectionEvent and drivers.board's port events);
every handler takes its exact class. See docs/controller.md.
"""
