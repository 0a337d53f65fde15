"""The board's firmware on its chip: MicroPython's stock image for the Raspberry Pi Pico on an
emulated RP2040 (tools/chip/runner.mjs, on rp2040js), wired to the simulated table
(see docs/chip.md).

    from simulator.chip.board import ChipBoard
    from simulator.chip.config import ChipConfig

Modules: flash (the littlefs file system made on the host from a firmware build), exchange
(the runner's process and the messages of a time slice), expander (the MCP23017 at register
level), wiring (the Pico's pins, from firmware/hal/rp2pins.py, on the simulated hardware of
simulator/hardware.py), config (ChipConfig: what an emulated board is), board (ChipBoard: the
runner in lock-step with the table, served on a pty or a TCP port). Nothing is imported here.
"""
