// The parts of the board rp2040js does not have: the I2C devices at register level (the two
// MCP23017 expanders, the dice unit) and the RP2040's ring oscillator with its random bit.

// An MCP23017 at register level (IOCON.BANK = 0, sequential addressing): its inputs are the pin
// levels the host gives, its outputs the latch.
export class Mcp23017 {
  constructor() {
    this.reg = new Uint8Array(0x16);
    this.reg[0] = this.reg[1] = 0xff; // IODIR: every pin an input at power-on
    this.pins = 0xffff;
    this.pointer = 0;
  }
  set state(bytes) {
    this.pins = bytes[0] | (bytes[1] << 8);
  }
  read() {
    const r = this.pointer;
    this.pointer = (this.pointer + 1) % 0x16;
    if (r === 0x12 || r === 0x13) {
      const port = r - 0x12;
      const iodir = this.reg[port];
      const pins = (this.pins >> (8 * port)) & 0xff;
      return ((pins ^ this.reg[2 + port]) & iodir) | (this.reg[0x14 + port] & ~iodir & 0xff);
    }
    return this.reg[r];
  }
  write(value, first) {
    if (first) {
      this.pointer = value % 0x16;
      return;
    }
    const r = this.pointer;
    this.pointer = (this.pointer + 1) % 0x16;
    this.reg[r === 0x12 || r === 0x13 ? r + 2 : r] = value; // GPIO writes the latch
  }
  output(port) {
    return this.reg[0x14 + port] & ~this.reg[port] & 0xff; // the latch, on the pins set as outputs
  }
}

// A device that answers reads with its bytes and takes writes (the dice unit).
export class ByteDevice {
  constructor() {
    this.data = new Uint8Array(0);
    this.at = 0;
  }
  set state(bytes) {
    this.data = Uint8Array.from(bytes);
  }
  read() {
    return this.at < this.data.length ? this.data[this.at++] : 0xff;
  }
  write() {}
}

// The ring oscillator: running and stable, its RANDOMBIT from a xorshift32 of the boot's seed.
export class Rosc {
  constructor(seed) {
    this.state = seed >>> 0 || 0x2545f491;
    this.ctrl = 0xfab000; // enabled
  }
  readUint32(offset) {
    switch (offset & 0xfff) {
      case 0x00:
        return this.ctrl;
      case 0x18:
        return 0x80001000; // STATUS: STABLE, ENABLED
      case 0x1c: {
        let x = this.state;
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        this.state = x >>> 0;
        return this.state & 1;
      }
    }
    return 0;
  }
  writeUint32Atomic(offset, value) {
    if ((offset & 0xfff) === 0) this.ctrl = value;
  }
}
