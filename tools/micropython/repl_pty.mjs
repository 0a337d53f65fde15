// A MicroPython board on a serial line, for mpremote: the official WebAssembly port's REPL on
// this process's stdin and stdout (give it one side of a pty; mpremote opens the other).
//
//   node tools/micropython/repl_pty.mjs [--root DIR] [--no-raw-paste]
//
// --root DIR copies DIR's files into the interpreter's file system first (what a board's flash
// already holds). The REPL is the port's own, byte for byte (friendly REPL, raw REPL, paste
// mode), with two things a port's main loop does around it and this one must do itself:
//
// - Soft reboot. When the REPL asks for one (Ctrl-D at an empty prompt), a board prints
//   "MPY: soft reboot", starts a fresh interpreter on the same flash and returns to the REPL mode
//   it was in. Here: the file system is kept, a new interpreter is loaded with it, and the raw
//   REPL is entered again when it was the mode.
// - Raw-paste mode. This port announces it (its raw REPL answers Ctrl-E 'A' Ctrl-A with "R\x01")
//   but then reads the pasted code through mp_hal_stdin_rx_chr, which in the WebAssembly port is a
//   stub that always returns 0: it would wait for Ctrl-D forever. So the bridge speaks raw-paste
//   to mpremote itself, with the port's own window (128 bytes, half its 256-byte stdin buffer)
//   and flow control, and hands the complete code to the port's raw REPL, whose answer it
//   passes on (without the "OK" that raw-paste does not send). With --no-raw-paste the bridge
//   answers as a raw REPL older than raw-paste does (Ctrl-A resets it: its banner again), and
//   mpremote falls back to the plain raw REPL.
//
// Everything is synchronous: a blocking read of stdin, each byte to the REPL, its output written
// at once. The process ends at end of input or on SIGTERM.
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync, readSync, readdirSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";

const CTRL_A = 0x01;
const CTRL_B = 0x02;
const CTRL_C = 0x03;
const CTRL_D = 0x04;
const CTRL_E = 0x05;
const PASTE_WINDOW = 128; // MICROPY_REPL_STDIN_BUFFER_MAX (256) / 2, as pyexec.c computes it

const args = process.argv.slice(2);
const rawPaste = !args.includes("--no-raw-paste");
const rootAt = args.indexOf("--root");

let out = [];
function emit(bytes) {
  for (const b of bytes) out.push(b);
}
function flush() {
  let data = Buffer.from(out);
  out = [];
  while (data.length) {
    const n = writeSync(1, data);
    data = data.subarray(n);
  }
}

// --- the flash: files kept across soft reboots -------------------------------------------------

function hostFiles(dir, prefix = "") {
  const files = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      files.push(...hostFiles(path, prefix + "/" + name));
    } else {
      files.push([prefix + "/" + name, readFileSync(path)]);
    }
  }
  return files;
}

function boardFiles(fs, dir = "/") {
  const files = [];
  for (const name of fs.readdir(dir)) {
    if (name === "." || name === ".." || (dir === "/" && (name === "dev" || name === "proc"))) {
      continue;
    }
    const path = (dir === "/" ? "" : dir) + "/" + name;
    const mode = fs.stat(path).mode;
    if (fs.isDir(mode)) {
      files.push(...boardFiles(fs, path), [path, null]);
    } else if (fs.isFile(mode)) {
      files.push([path, fs.readFile(path)]);
    }
  }
  return files;
}

function restore(fs, files) {
  for (const [path, data] of files) {
    const parts = path.split("/").slice(1, data === null ? undefined : -1);
    let dir = "";
    for (const part of parts) {
      dir += "/" + part;
      try {
        fs.mkdir(dir);
      } catch {
        // there already
      }
    }
    if (data !== null) fs.writeFile(path, data);
  }
}

// --- the interpreter ---------------------------------------------------------------------------

let mp = null;
let raw = false; // the REPL's mode, as the port's pyexec_mode_kind
let line = []; // bytes of the raw REPL's current command (to see Ctrl-E 'A' Ctrl-A)

async function start(files, rawMode) {
  mp = await loadMicroPython({ stdout: emit, linebuffer: false });
  restore(mp.FS, files);
  const before = out.length;
  mp.replInit(); // the friendly banner
  if (rawMode) {
    out.length = before; // a board in raw mode shows only the raw REPL's banner after a reboot
    mp.replProcessChar(CTRL_A);
    out.splice(before, 2); // "\r\n" of the friendly REPL's switch
  }
  raw = rawMode;
  line = [];
}

async function softReboot() {
  const files = boardFiles(mp.FS);
  emit(Buffer.from("MPY: soft reboot\r\n"));
  await start(files, raw);
}

async function toRepl(c) {
  if (raw) {
    if (c === CTRL_B) raw = false;
    if (c === CTRL_A || c === CTRL_B || c === CTRL_C || c === CTRL_D) line = [];
    else line.push(c);
  } else if (c === CTRL_A) {
    raw = true;
    line = [];
  }
  if (mp.replProcessChar(c) !== 0) await softReboot();
}

// --- raw-paste, spoken on the port's behalf ----------------------------------------------------

let paste = null; // the code being pasted, or null

function pasteStart() {
  mp.replProcessChar(CTRL_C); // the raw REPL drops Ctrl-E 'A' (clear line: prints nothing)
  line = [];
  if (!rawPaste) {
    mp.replProcessChar(CTRL_A); // a raw REPL without raw-paste: Ctrl-A resets it, banner again
    return;
  }
  emit([0x52, 0x01, PASTE_WINDOW & 0xff, PASTE_WINDOW >> 8, CTRL_A]);
  paste = { code: [], remain: PASTE_WINDOW };
}

function pasteByte(c) {
  if (c === CTRL_C || c === CTRL_D) {
    const code = c === CTRL_D ? paste.code : Array.from(Buffer.from("raise KeyboardInterrupt"));
    paste = null;
    emit([CTRL_D]); // end of data seen
    const before = out.length;
    for (const b of code) mp.replProcessChar(b);
    mp.replProcessChar(CTRL_D); // the port answers "OK", runs it, "\x04", errors, "\x04", ">"
    out.splice(before, 2); // raw-paste sends no "OK"
    return;
  }
  paste.code.push(c);
  if (--paste.remain === 0) {
    emit([CTRL_A]); // another window is free
    paste.remain = PASTE_WINDOW;
  }
}

// --- the serial line ---------------------------------------------------------------------------

await start(rootAt >= 0 ? hostFiles(args[rootAt + 1]) : [], false);
flush();
const buf = Buffer.alloc(4096);
for (;;) {
  let n;
  try {
    n = readSync(0, buf, 0, buf.length, null);
  } catch (error) {
    if (error.code === "EAGAIN") {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      continue;
    }
    if (error.code === "EIO") break; // the other side of the pty is gone
    throw error;
  }
  if (n === 0) break;
  for (let i = 0; i < n; i++) {
    const c = buf[i];
    if (paste !== null) {
      pasteByte(c);
    } else if (raw && c === CTRL_A && line.length === 2 && line[0] === CTRL_E && line[1] === 0x41) {
      pasteStart();
    } else {
      await toRepl(c);
    }
  }
  flush();
}
flush();
process.exit(0);
