"""The table board's firmware: the board's logic once, above a hardware abstraction (HAL).

Runs under MicroPython on the board (the reference board is a Raspberry Pi Pico, firmware/hal/
rp2.py) and under CPython for the tests and, later, the simulator (firmware/hal/virtual.py is
ideal hardware in memory). It speaks the board protocol with protocol/'s own engine
(``Connection(role=BOARD)``). See docs/firmware.md.

    hal/__init__.py   the HAL contract (class Hal: every method the firmware calls)
    hal/rp2.py        the reference board (RP2040): pins, PWM, ADC, IRQ counters, UART, WDT
    hal/virtual.py    ideal, deterministic hardware with faults injected at the hardware level
    config.py         what the table is (tiles, units fitted) and the limits the firmware keeps
    places.py         where each tile set is, and which command is legal when
    store.py          the persistent record: two slots, sequence number, CRC
    supervisor.py     safety and stall supervision of every motion
    phases.py         shuffle, lift, collect, dice, motor test as steps on the hardware
    build.py          the build: stacking, pushing, the tile reader and the manifest
    board.py          the board's state machine: commands, refusals, faults, status
    app.py            the main loop around the protocol engine; boot()
    main.py           the board's entry point (MicroPython runs it at power-on)
    harness.py        the firmware on the virtual HAL with a host engine on its UART (tests)
"""
