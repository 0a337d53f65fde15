// The board's RP2040, emulated: the stock MicroPython image for the Raspberry Pi Pico running on
// rp2040js, its flash file system kept in a file on the host, driven time slice by time slice by
// the simulated table on the other end of two pipes (simulator/chip/, docs/chip.md).
//
//   node tools/chip/runner.mjs --fs FILE [--fds IN,OUT] [--shared DIR] [--wiring JSON]
//
// --fs FILE     the flash file system (littlefs, FS_SIZE bytes in images.mjs, made on the host):
//               read at start, every erase and program the chip makes is written through to it,
//               so a power cut (the runner killed, or the "power cut" command) keeps what was
//               written.
// --shared DIR  where RPI_PICO-v1.27.0.bin and bootrom-rp2040-b1.bin are (also
//               MJTABLE_RP2040_DIR; default: ../shared/rp2040 beside the checkout); both are
//               checked against the folder's SHA256SUMS.
// --image FILE  a raw flash image (from 0x10000000, ending before the file system) booted instead
//               of the shared folder's stock MicroPython: `mjtable firmware image`'s, the
//               firmware frozen in (simulator/chip/image.py makes the file from its UF2)
// --fds IN,OUT  the descriptors of the exchange (default 3,4)
// --entropy N   seeds the ring oscillator's random bit (with the boot's number: each boot of the
//               chip draws other bits, the same ones for the same N)
// --wiring JSON the I2C devices and the ADC multiplexer (see WIRING below).
//
// The exchange: IN carries the inputs of each slice from the host, OUT the outputs of the chip
// back; its messages are in tools/chip/exchange.mjs.
//
// What rp2040js 1.4.1 lacks, and what this runner does about it (the shared folder's README):
//   1. WFI/WFE with no timer armed does not advance the clock: the clock goes to the next event
//      (an edge, a UART byte) or the slice's end.
//   2. UART TX interrupt raised at every register access, and no TX FIFO: a 32-byte FIFO that
//      sends a byte each character time at the baud rate set, its interrupt raised when it
//      drains to half full and cleared by UARTICR or by a write that fills it above that.
//   3. No flash behind the SSI: the boot ROM's flash_range_erase and flash_range_program are
//      intercepted at their entry, applied to the flash and to the file, charged the time a
//      W25Q16JV takes (45 ms a 4 KiB sector, 0.4 ms a 256-byte page), and return to LR.
//   4. USB CDC reads answered at once, empty: the console only reads the device (IN) and never
//      answers an OUT transfer, so the REPL waits instead of spinning.
//   5. No "TX empty" after an unacknowledged address: set, so MicroPython reports EIO as a real
//      board does instead of ETIMEDOUT.
//   6. The watchdog fires forever: the chip is reset here (new core and peripherals, the flash,
//      the watchdog's reason and scratch registers kept), so machine.reset_cause() reads
//      WDT_RESET.
//   7. No UARTIFLS and no RTS: the register is kept, and UART0's RTS is high (stop) while hardware
//      flow control is on and the RX FIFO holds its trigger level; a host whose UART waits on CTS
//      (the exchange's flag: the host opened its port with RTS/CTS) sends UART0's next byte only
//      while RTS is low, so a core stalled by a flash erase loses none.
// Also: the ring oscillator (ROSC), which rp2040js leaves out, is there with its random bit, so
// the session id MicroPython draws from it differs at each boot, as on a real board.
// Rising edges are given one at a time, each after the chip has had time to take the interrupt;
// UART bytes arrive and leave at the UART's baud rate; I2C takes no bus time.
import { RP2040, USBCDC } from "rp2040js";
import { closeSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { ByteDevice, Mcp23017, Rosc } from "./devices.mjs";
import { Reader, Writer, readExactly, send as sendOn } from "./exchange.mjs";
import { FLASH_SIZE, FS_OFFSET, loadFlash } from "./images.mjs";
import { rtsLine, rxLine, txFifo } from "./uart.mjs";

const SECTOR_ERASE_NS = 45e6;
const PAGE_PROGRAM_NS = 0.4e6;
const EDGE_GAP_NS = 40e3; // between two edges of a pin: the interrupt handler runs in between

// --- arguments and files -------------------------------------------------------------------------

// a message to the host (tools/chip/exchange.mjs)
function send(type, payload) {
  sendOn(OUT, type, payload);
}

function fail(text) {
  send("E", Buffer.from(text));
  process.exit(1);
}

const args = process.argv.slice(2);
function option(name) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}
const checkout = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const shared =
  option("--shared") ?? process.env.MJTABLE_RP2040_DIR ?? join(checkout, "..", "shared", "rp2040");
const fsPath = option("--fs");
const [IN, OUT] = (option("--fds") ?? "3,4").split(",").map(Number);
// WIRING: {"i2c": [{"address": 32, "kind": "mcp23017"}, {"address": 48, "kind": "bytes"}],
//          "mux": {"adc": 0, "address": 33, "shift": 8, "bits": 4}}
const wiring = JSON.parse(option("--wiring") ?? '{"i2c": []}');
const entropy = Number(option("--entropy") ?? 1) >>> 0;

const { initialFlash, bootrom, fsFile } = loadFlash({
  shared,
  fsPath,
  imagePath: option("--image"),
  fail,
});

// --- the I2C devices (tools/chip/devices.mjs) ---------------------------------------------------

// the devices on I2C0, at power-on (a power cut resets them; a watchdog reset of the chip does not)
const devices = new Map();
function powerDevices() {
  for (const d of wiring.i2c ?? []) {
    const model = d.kind === "mcp23017" ? new Mcp23017() : new ByteDevice();
    devices.set(d.address, { model, present: false });
  }
}
powerDevices();

// --- the chip ------------------------------------------------------------------------------------

const logger = {
  debug() {},
  info() {},
  warn() {},
  error(component, message) {
    process.stderr.write(`rp2040js [${component}] ${message}\n`);
  },
};

let chip;
let clockBase = 0; // ns of chip time before the current boot
let boots = 0;
let lastCause = 0;
let stallUntil = 0; // ns (this boot's clock): the core waits for the flash
let pendingReset = null;
// the power cut aimed at a flash operation: { kind: 1 erase | 2 program | 3 either, left, percent }
let flashCut = null;
let flashOps = 0; // flash operations begun during the current slice
let flashCutStruck = false; // the armed flash cut struck during the current slice
const ERASE = 1;
const PROGRAM = 2;
const events = []; // [ns, fn] of this boot's clock, sorted
let uartRx = []; // each UART's line from the host (tools/chip/uart.mjs, rxLine), this boot's
let hostCts = false; // the host's UART sends UART0's bytes only while the chip's RTS is low
const uartTx = [[], []];
const i2cWrites = [];
let edgeBusy = new Map(); // gpio -> ns when its last edge was given
let flash; // the current chip's flash (its first FLASH_SIZE bytes are the Pico's)
let eraseAt = -1; // the boot ROM's flash_range_erase and flash_range_program
let programAt = -1;
let levels = 0; // the input levels of GP0..GP29
const adcValues = [0, 0, 0, 0, 0];
const muxValues = new Map();

function romFunction(code) {
  const rom = chip.bootrom;
  const half = (addr) => (rom[addr >> 2] >>> ((addr & 2) * 8)) & 0xffff;
  let at = half(0x14);
  for (;;) {
    const c = half(at);
    if (!c) return -1;
    if (c === code) return half(at + 2) & ~1;
    at += 4;
  }
}

// A new chip: core and peripherals as at power-on, the flash as it was. ``keep``: what the
// watchdog keeps across its reset (its reason and scratch registers).
function boot(cause, keep) {
  const old = chip ? flash : initialFlash;
  if (chip) clockBase += chip.clock.nanos;
  chip = new RP2040();
  chip.logger = logger;
  chip.peripherals[0x40060] = new Rosc(Math.imul(entropy ^ 0x9e3779b9, boots + 1));
  chip.loadBootrom(new Uint32Array(bootrom.buffer, bootrom.byteOffset, bootrom.length / 4));
  chip.flash.set(old, 0);
  flash = chip.flash.subarray(0, FLASH_SIZE);
  if (keep) {
    chip.peripherals[0x40058].reason = keep.reason;
    chip.peripherals[0x40058].scratchData.set(keep.scratch);
  }
  const code = (a, b) => a.charCodeAt(0) | (b.charCodeAt(0) << 8);
  eraseAt = romFunction(code("R", "E"));
  programAt = romFunction(code("R", "P"));
  stallUntil = 0;
  events.length = 0;
  edgeBusy = new Map();
  boots += 1;
  lastCause = cause;
  wire();
  for (let gpio = 0; gpio < 30; gpio++) setLevel(gpio, !!((levels >> gpio) & 1));
  chip.adc.channelValues.splice(0, adcValues.length, ...adcValues);
  chip.core.PC = 0x10000000; // boot2, at the start of the flash
}

function wire() {
  const watchdog = chip.peripherals[0x40058];
  watchdog.onWatchdogTrigger = () => {
    const keep = { reason: watchdog.reason, scratch: Uint32Array.from(watchdog.scratchData) };
    pendingReset = { cause: 1, keep };
    watchdog.timer.enable = false;
    watchdog.alarm.enable = false;
  };
  // gap 2: the UARTs' TX FIFO (tools/chip/uart.mjs)
  chip.uart.forEach((uart, n) => {
    txFifo(uart, at, () => chip.clock.nanos, (value) => uartTx[n].push(value));
  });
  // the host's bytes, a character time apart; UART0's wait while its RTS is high and the host's
  // UART waits on CTS (gap 7)
  const now = () => chip.clock.nanos;
  const rts = rtsLine(chip.uart[0]);
  uartRx = [
    rxLine(chip.uart[0], at, now, () => hostCts && rts()),
    rxLine(chip.uart[1], at, now, () => false),
  ];
  // I2C0: the devices of the wiring, at register level
  const i2c = chip.i2c[0];
  let target = null;
  let first = false;
  let written = null;
  const flushWrite = () => {
    if (written && written.length > 1) i2cWrites.push([target, written]);
    written = null;
  };
  i2c.onStart = () => i2c.completeStart();
  i2c.onConnect = (address, mode) => {
    flushWrite();
    const device = devices.get(address);
    if (!device || !device.present) {
      target = null;
      i2c.completeConnect(false);
      i2c.setInterrupts(1 << 4); // gap 5: TX empty, as the silicon shows after a NAK
      return;
    }
    target = address;
    first = mode === 0;
    written = mode === 0 ? [] : null;
    if (mode !== 0 && device.model instanceof ByteDevice) device.model.at = 0;
    i2c.completeConnect(true);
  };
  i2c.onWriteByte = (value) => {
    devices.get(target).model.write(value, first);
    first = false;
    written.push(value);
    i2c.completeWrite(true);
  };
  i2c.onReadByte = () => i2c.completeRead(devices.get(target).model.read());
  i2c.onStop = () => {
    flushWrite();
    i2c.completeStop();
  };
  // the ADC: a multiplexed channel reads the input the expander's outputs select
  const adc = chip.adc;
  const read = adc.onADCRead;
  adc.onADCRead = (channel) => {
    const mux = wiring.mux;
    if (mux && channel === mux.adc) {
      const expander = devices.get(mux.address)?.model;
      const outputs =
        expander instanceof Mcp23017 ? expander.output(0) | (expander.output(1) << 8) : 0;
      const selected = (outputs >> mux.shift) & ((1 << mux.bits) - 1);
      adc.channelValues[channel] = muxValues.get(selected) ?? 0;
    }
    read.call(adc, channel);
  };
  // gap 4: the console reads what MicroPython writes, and never answers its reads
  const cdc = new USBCDC(chip.usbCtrl);
  cdc.onSerialData = (data) => send("C", Buffer.from(data));
  chip.usbCtrl.onEndpointRead = () => {};
}

function at(ns, fn) {
  let i = events.length;
  while (i > 0 && events[i - 1][0] > ns) i--;
  events.splice(i, 0, [ns, fn]);
}

// gap 3: the boot ROM's flash functions, on the flash and the file; an armed flash cut strikes
// in the operation it aims at: part of it done, then the power goes
function romCall(erase) {
  const core = chip.core;
  const [a, b, c] = [core.registers[0] >>> 0, core.registers[1] >>> 0, core.registers[2] >>> 0];
  flashOps += 1;
  let cut = false;
  if (flashCut && flashCut.kind & (erase ? ERASE : PROGRAM)) {
    flashCut.left -= 1;
    cut = flashCut.left === 0;
  }
  let ns;
  if (erase) {
    const start = a & ~0xfff;
    const end = Math.min((a + b + 0xfff) & ~0xfff, FLASH_SIZE);
    const upTo = cut ? start + Math.floor(((end - start) * flashCut.percent) / 100) : end;
    flash.fill(0xff, start, upTo);
    ns = ((end - start) / 4096) * SECTOR_ERASE_NS;
    store(start, upTo);
  } else {
    const length = Math.min(c, FLASH_SIZE - a);
    const upTo = cut ? Math.floor((length * flashCut.percent) / 100) : length;
    for (let i = 0; i < upTo; i++) {
      flash[a + i] &= chip.readUint8(b + i); // NOR: a program only clears bits
    }
    ns = Math.ceil(c / 256) * PAGE_PROGRAM_NS;
    store(a, a + upTo);
  }
  if (cut) {
    flashCut = null;
    flashCutStruck = true;
    pendingReset = { cause: 0, keep: null, power: true };
    return;
  }
  core.PC = core.LR & ~1;
  stallUntil = chip.clock.nanos + ns;
}

function store(start, end) {
  const from = Math.max(start, FS_OFFSET);
  if (end > from) writeSync(fsFile, flash, from, end - from, from - FS_OFFSET);
}

function runUntil(target) {
  const clock = chip.clock;
  const core = chip.core;
  while (clock.nanos < target && !pendingReset) {
    while (events.length && events[0][0] <= clock.nanos) events.shift()[1]();
    const next = events.length && events[0][0] < target ? events[0][0] : target;
    if (stallUntil > clock.nanos) {
      clock.tick(Math.min(stallUntil, next) - clock.nanos);
      continue;
    }
    const cycleNs = 1e9 / chip.clkSys;
    while (clock.nanos < next && !pendingReset) {
      if (core.waiting) {
        // gap 1: no alarm armed, the clock still goes on to the next event
        const alarm = clock.nextAlarm ? clock.nextAlarm.nanos : next;
        clock.tick(Math.max(0, Math.min(alarm, next) - clock.nanos));
        if (core.waiting && clock.nanos >= next) break;
        continue;
      }
      const pc = core.PC;
      if (pc === eraseAt || pc === programAt) {
        romCall(pc === eraseAt);
        break;
      }
      clock.tick(core.executeInstruction() * cycleNs);
    }
  }
  if (pendingReset) {
    const { cause, keep, power } = pendingReset;
    pendingReset = null;
    const left = target - chip.clock.nanos;
    if (power) {
      powerDevices(); // the expanders lose their registers too
      i2cWrites.length = 0;
    }
    boot(cause, keep);
    if (left > 0) runUntil(left);
  }
}

// --- the inputs of a slice -----------------------------------------------------------------------

function setLevel(gpio, value) {
  const pin = chip.gpio[gpio];
  if (pin.rawInputValue !== value) pin.setInputValue(value);
}

function applyInputs(r, newLevels, sliceNs) {
  const now = chip.clock.nanos;
  const pulses = new Map();
  for (let n = r.u8(); n > 0; n--) pulses.set(r.u8(), r.u8());
  for (let gpio = 0; gpio < 30; gpio++) {
    const level = !!((newLevels >> gpio) & 1);
    const count = pulses.get(gpio) ?? 0;
    if (!count) {
      setLevel(gpio, level);
      continue;
    }
    // `count` rising edges spread over the slice, each after the last one's interrupt ran
    let t = Math.max(now, edgeBusy.get(gpio) ?? 0);
    const gap = Math.min(EDGE_GAP_NS, sliceNs / (2 * count + 1));
    for (let i = 0; i < count; i++) {
      at(t, () => setLevel(gpio, false));
      at(t + gap, () => setLevel(gpio, true));
      t += 2 * gap;
    }
    at(t, () => setLevel(gpio, level));
    edgeBusy.set(gpio, t);
  }
  levels = newLevels;
  for (let n = r.u8(); n > 0; n--) {
    const channel = r.u8();
    const mux = r.u8();
    const value = r.u16();
    if (mux === 255) adcValues[channel] = chip.adc.channelValues[channel] = value;
    else muxValues.set(mux, value);
  }
  for (const device of devices.values()) device.present = false;
  for (let n = r.u8(); n > 0; n--) {
    const address = r.u8();
    const state = r.bytes(r.u8());
    const device = devices.get(address);
    if (device) {
      device.present = true;
      device.model.state = state;
    }
  }
  for (const n of [0, 1]) uartRx[n].add(r.bytes(r.u16()));
  const [kind, nth, percent] = [r.u8(), r.u8(), r.u8()];
  if (kind) flashCut = { kind, left: Math.max(1, nth), percent: Math.min(100, percent) };
  hostCts = r.u8() === 1;
}

// --- the outputs of a slice ----------------------------------------------------------------------

function outputs() {
  const w = new Writer();
  w.f64((clockBase + chip.clock.nanos) / 1000);
  w.u8(boots);
  w.u8(lastCause);
  let out = 0;
  let enable = 0;
  for (let gpio = 0; gpio < 30; gpio++) {
    const pin = chip.gpio[gpio];
    if (pin.functionSelect === 5 && pin.outputEnable) {
      enable |= 1 << gpio;
      if (pin.outputValue) out |= 1 << gpio;
    }
  }
  w.u32(out);
  w.u32(enable);
  for (const channel of chip.pwm.channels) {
    w.u8(channel.csr & 1);
    w.u16(channel.top);
    w.u16(channel.cc & 0xffff);
    w.u16(channel.cc >>> 16);
  }
  w.u8(i2cWrites.length);
  for (const [address, bytes] of i2cWrites.splice(0)) {
    w.u8(address);
    w.u8(bytes.length);
    w.bytes(bytes);
  }
  for (const n of [0, 1]) {
    const data = uartTx[n].splice(0);
    w.u16(data.length);
    w.bytes(data);
  }
  w.u16(Math.min(flashOps, 0xffff));
  w.u8(flashCutStruck ? 1 : 0);
  flashOps = 0;
  flashCutStruck = false;
  return w.done();
}

// --- the loop ------------------------------------------------------------------------------------

boot(0, null);
for (;;) {
  const head = readExactly(IN, 4);
  if (!head) break;
  const body = readExactly(IN, head.readUInt32LE(0));
  if (!body) break;
  if (body[0] !== 0x49) fail(`unknown message ${body[0]} from the host`);
  const r = new Reader(body.subarray(1));
  const sliceNs = r.u32() * 1000;
  const newLevels = r.u32();
  const command = r.u8();
  if (command === 2) break;
  if (command === 1) {
    // a power cut: the chip and the expanders start again; the flash keeps what was written
    powerDevices();
    boot(0, null);
  }
  if (command === 3) stallUntil = Infinity; // until a reset (boot() clears it)
  applyInputs(r, newLevels, sliceNs);
  const end = chip.clock.nanos + sliceNs;
  uartRx[0].start();
  uartRx[1].start();
  runUntil(end);
  send("S", outputs());
}
closeSync(fsFile);
