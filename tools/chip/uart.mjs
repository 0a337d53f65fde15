// The RP2040's PL011 UART where rp2040js differs from the silicon: a TX FIFO that sends one byte
// each character time at the baud rate set (the runner's gap 2); the interrupt FIFO level
// register and the RTS line that hardware flow control drives from it (gap 7); the line from
// the host, a byte each character time; and a character's time on the line.

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
// IFLS (its reset value: both levels at 1/2), its RX levels in bytes, and CR's RTSEN
const UARTIFLS = 0x34;
const IFLS_RESET = 0x12;
const RX_LEVELS = [4, 8, 16, 24, 28];
const RTSEN = 1 << 14;

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

// gap 7: rp2040js keeps no UARTIFLS (a write is dropped, a read gives all ones) and drives no RTS.
// Here the register holds what the firmware writes (the pico-sdk's read-modify-writes too, by
// the atomic aliases), and the returned function tells whether RTS is high (stop): hardware flow
// control on (CR's RTSEN) and the RX FIFO holding its trigger level or more, as the PL011 does
// (its FIFO drained below the level, RTS goes low again). It needs no core: a core stalled by a
// flash erase still holds the line.
export function rtsLine(uart) {
  let ifls = IFLS_RESET;
  const read = uart.readUint32.bind(uart);
  const write = uart.writeUint32.bind(uart);
  uart.readUint32 = (offset) => (offset === UARTIFLS ? ifls : read(offset));
  uart.writeUint32 = (offset, value) => {
    if (offset === UARTIFLS) ifls = value & 0x3f;
    else write(offset, value);
  };
  return () => {
    if (!(uart.ctrlRegister & RTSEN)) return false;
    const level = RX_LEVELS[(ifls >> 3) & 7] ?? RX_LEVELS[4];
    return uart.rxFIFO.itemCount >= (uart.fifosEnabled ? level : 1);
  };
}

// The line from the host into the UART's RX FIFO: the bytes `add`ed arrive one character time
// apart (start, 8 data bits, stop), an event of the chip's clock each (`at`, `now` as txFifo's);
// `start()` after each slice's bytes; what a slice has no time for goes on in the next. While
// `held()` (a host waiting on CTS, the chip's RTS high: gap 7) the next byte waits, looked at
// again each character time, as a UART looks at CTS before each character. A byte that finds
// the FIFO full is lost, as on the silicon. A new chip (a reset) gets a new line: what was on
// its way is gone with the old one.
export function rxLine(uart, at, now, held) {
  const bytes = [];
  let head = 0; // the next byte to send
  let sending = false; // an event will send it
  let next = 0; // ns: the next byte may start then
  const send = () => {
    const t = now();
    const step = charNs(uart);
    if (held()) {
      at(t + step, send);
      return;
    }
    const value = bytes[head++];
    if (uart.enabled && uart.rxEnabled && !uart.rxFIFO.full) uart.feedByte(value);
    next = t + step;
    if (head < bytes.length) at(next, send);
    else sending = false;
  };
  return {
    add(data) {
      if (head > 4096 && head * 2 > bytes.length) {
        bytes.splice(0, head); // the bytes sent go, now and then: the queue stays linear
        head = 0;
      }
      for (const value of data) bytes.push(value);
    },
    start() {
      if (sending || head >= bytes.length) return;
      sending = true;
      at(Math.max(now(), next), send);
    },
  };
}
