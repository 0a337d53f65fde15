"""The table board's firmware: the board's logic once, above a hardware abstraction (HAL).

Runs under MicroPython on the board (the reference board is a Raspberry Pi Pico, firmware/hal/
rp2.py) and under CPython for the tests (firmware/hal/virtual.py is ideal hardware in memory)
and in the simulator (simulator/hardware.py, a subclass of it). It speaks the board protocol
with protocol/'s own engine (``Connection(role=BOARD)``). See docs/firmware.md.

    hal/__init__.py   the HAL contract (class Hal: every call the firmware makes to the hardware)
    hal/rp2pins.py    the reference board's (RP2040) pin map and its parts' values and arithmetic
    hal/rp2.py        the reference board's HAL: pins, PWM, ADC, IRQ counters, UART, WDT, store
    hal/mechanics.py  the virtual table's mechanics: what its motors move, what its sensors see
    hal/virtual.py    ideal, deterministic hardware over those mechanics (tests, benchmark)
    config.py         what the table is (tiles) and the limits the firmware keeps (Timings)
    places.py         where each tile set is, and which command its place allows
    store.py          the persistent record: two slots, sequence number, CRC
    supervisor.py     safety and stall supervision at every pass of the loop
    phases.py         shuffle, lift, collect, dice, motor test as steps on the hardware
    build.py          the build: stacking, pushing, the tile reader and the manifest
    commands.py       one function per command: what it checks, refuses, answers or starts
    board.py          the board's state machine: motions begun and ended, faults, status
    status.py         BOARD_STATUS, SENSOR_DATA, whether a fault's cause is still there
    app.py            the main loop around the protocol engine; boot()
    main.py           the board's entry point (MicroPython runs it at power-on)
    harness.py        the firmware on the virtual HAL with a host engine on its UART (tests)
"""
