// The RP2040's PL011 UART where rp2040js differs from the silicon (the runner's gap 2): a TX FIFO
// that sends one byte each character time at the baud rate set; and a character's time on the
// line.

// the PL011 UART: its TX FIFO, the level its TX interrupt fires at (IFLS's reset value, 1/2),
// the flags and the interrupt bit
const TX_FIFO = 32;
const TX_TRIGGER = 16;
const TXFE = 1 << 7;
const RXFF = 1 << 6;
const TXFF = 1 << 5;
const RXFE = 1 << 4;
const BUSY = 1 << 3;
const TXINTR = 1 << 5;

// a character's time on the line: start bit, data bits, parity, stop bits
export function charNs(uart) {
  const baud = uart.baudDivider ? uart.baudRate : 115200;
  const lcr = uart.lineCtrlRegister;
  const bits = 1 + uart.wordLength + (lcr & 2 ? 1 : 0) + (lcr & 8 ? 2 : 1);
  return (bits * 1e9) / baud;
}

// gap 2: a TX FIFO that sends one character time per byte; its interrupt is raised when the
// FIFO drains to its trigger level and cleared by UARTICR or by a write that fills it above.
// `at(ns, fn)` runs fn at that time of the chip's clock, `now()` is that clock, `sent(value)`
// takes each byte as it leaves.
export function txFifo(uart, at, now, sent) {
  const fifo = [];
  uart.checkInterrupts = function () {
    this.rp2040.setInterrupt(this.irq, !!(this.interruptStatus & this.interruptMask));
  };
  const depth = () => (uart.fifosEnabled ? TX_FIFO : 1);
  Object.defineProperty(uart, "flags", {
    get() {
      const rx = (uart.rxFIFO.full ? RXFF : 0) | (uart.rxFIFO.empty ? RXFE : 0);
      const full = fifo.length >= depth() ? TXFF : 0;
      return rx | full | (fifo.length ? BUSY : TXFE);
    },
  });
  const send = () => {
    const before = fifo.length;
    sent(fifo.shift());
    if (before > TX_TRIGGER && fifo.length <= TX_TRIGGER) {
      uart.interruptStatus |= TXINTR;
      uart.checkInterrupts();
    }
    if (fifo.length) at(now() + charNs(uart), send);
  };
  uart.onByte = (value) => {
    if (fifo.length >= depth()) return; // written while full: lost, as on the silicon
    fifo.push(value);
    if (fifo.length > TX_TRIGGER && uart.interruptStatus & TXINTR) {
      uart.interruptStatus &= ~TXINTR;
      uart.checkInterrupts();
    }
    if (fifo.length === 1) at(now() + charNs(uart), send);
  };
}
