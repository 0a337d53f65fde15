"""I/O to the table's devices: the serial link to the board (``board``; ``portlock``, one
program at a port, and ``portopen``, why a port could not be opened), the dealer's USB
button panel (``panel``, with ``usbemu``: a pyusb backend that emulates it for tests and the
simulator), the one I/O loop every link and local server runs on (``ioloop``,
``lineserver``), and the files the Pico's boot loader takes (``uf2``). Nothing above this room
knows whether a port is real, a pty or a socket."""
