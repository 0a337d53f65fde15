// The exchange between the emulated chip (tools/chip/runner.mjs) and the simulated table
// (simulator/chip/exchange.py): two pipes, IN the inputs of each slice from the host, OUT the
// outputs of the chip back (the runner's --fds; stdout and stderr are free for diagnostics).
// Every message is a u32 length (little-endian) and that many bytes, the first a type:
//
//   host -> chip  "I" inputs, then the chip runs the slice and answers "S":
//                   u32 slice_us, u32 levels (input level of GP0..GP29), u8 command
//                   (0 run, 1 power cut: the chip and its I2C devices start again, the flash
//                   as it was; 2 end: the runner exits; 3 hang: the core stops running code,
//                   as stuck with its interrupts off, while its clock, timers and watchdog go
//                   on, so a watchdog that was started resets it), u8 n + n x (u8 gpio,
//                   u8 rising edges to give during the slice), u8 n + n x (u8 adc channel, u8 mux
//                   channel or 255, u16 value 0..4095), u8 n + n x (u8 i2c address, u8 length,
//                   state: an expander's u16 input pins, a byte device's bytes; an address not
//                   listed does not answer), u16 n + UART0 bytes, u16 n + UART1 bytes,
//                   u8 flash cut (0 none; else the power is cut during the chip's next flash
//                   operation of that kind: 1 an erase, 2 a program, 3 either; it replaces one
//                   armed before and stays armed across slices until it strikes), u8 nth (the
//                   nth such operation from now, 1 the next), u8 percent (how much of it is done
//                   when the power goes: a program's first bytes programmed, an erase's first
//                   bytes erased, in order; 100 all of it, and nothing after), u8 host CTS (1:
//                   the host's UART sends UART0's bytes only while the chip's UART0 RTS is
//                   low, its CTS wired to GP3; 0: whenever it has some)
//   chip -> host  "S" slice done: f64 chip time (us since the runner started), u8 boots (resets
//                   since start, modulo 256), u8 last reset cause (0 power, 1 watchdog),
//                   u32 output levels, u32 output enables (GP0..GP29 driven by SIO), 8 PWM slices
//                   x (u8 enabled, u16 top, u16 level A, u16 level B), u8 n + n x (u8 i2c address,
//                   u8 length, bytes: a write transaction, register first), u16 n + UART0 bytes,
//                   u16 n + UART1 bytes, u16 flash operations (erases and programs) begun during
//                   the slice, u8 1 when the armed flash cut struck during the slice (the chip
//                   and its I2C devices then started again from power-on, as for command 1)
//                 "C" console: bytes MicroPython wrote on its USB REPL
//                 "E" a fault of the runner, in words; the runner then exits with status 1

import { readSync, writeSync } from "node:fs";

// Send one message of that type (a letter) on the descriptor `out`.
export function send(out, type, payload) {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(payload.length + 1, 0);
  head.write(type, 4, "latin1");
  const data = Buffer.concat([head, payload]);
  let done = 0;
  while (done < data.length) {
    done += writeSync(out, data, done);
  }
}

// n bytes from the descriptor `from`; null when the host went away.
export function readExactly(from, n) {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    let k;
    try {
      k = readSync(from, buf, got, n - got, null);
    } catch (err) {
      if (err.code === "EAGAIN") continue;
      throw err;
    }
    if (k === 0) return null; // the host went away
    got += k;
  }
  return buf;
}

// The fields of a message, in order.
export class Reader {
  constructor(buf) {
    this.buf = buf;
    this.at = 0;
  }
  u8() {
    return this.buf[this.at++];
  }
  u16() {
    const v = this.buf.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }
  u32() {
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  bytes(n) {
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
}

// A message built field by field.
export class Writer {
  constructor() {
    this.parts = [];
  }
  u8(v) {
    this.parts.push(Buffer.from([v & 0xff]));
  }
  u16(v) {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v & 0xffff);
    this.parts.push(b);
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    this.parts.push(b);
  }
  f64(v) {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    this.parts.push(b);
  }
  bytes(v) {
    this.parts.push(Buffer.from(v));
  }
  done() {
    return Buffer.concat(this.parts);
  }
}
