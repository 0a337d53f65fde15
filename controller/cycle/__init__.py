"""The deal cycle: one cycle after another over the board link.

    controller.py  CycleController, the one public entry (requests, board events, status):
                   it owns the state and the lock, and hands each job to a part it holds
    requests.py    what a person asks, accepted or refused in one sentence
    steps.py       the cycle's steps, from SHUFFLE to the dealt state
    links.py       the link coming up, going down, the board restarting, its firmware build
    testing.py     a technician's diagnosis: the sensors, the motor tests
    reconcile.py   the board's report against what the host believed; CLEAR FAULT, recovery
    guards.py      what ends a cycle badly: faults, deadlines passed, the audit log
    phases.py      the machine moving, and the state's deadline
    board.py       the board as the host knows it, and the one way to send to it
    core.py        the state the controller owns, and the plumbing (events, records, presses,
                   the deals published)
    states.py      the machine's states as data: one row per state (meaning, deadline, the
                   DONE it waits for, the buttons it accepts, the refusal's words, LEDs)
    places.py      where each tile set is, from the board's report; what may be sent
    deadline.py    the phase deadlines (DEFAULT_DEADLINES) and the timer thread
    faults.py      the controller's own faults as a catalogue: words and advice
    reports.py     what the cycle publishes: events, status, command results
    diagnosis.py   the board's reports as a technician reads them

Each part calls only those listed below it. Board events arrive typed
(protocol.events.ConnectionEvent and drivers.board's port events); every handler takes its
exact class. See docs/controller.md.
"""
