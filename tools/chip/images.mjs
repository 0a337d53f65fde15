// What the emulated chip starts from: MicroPython's image (the shared folder's stock one, or
// `mjtable firmware image`'s), the RP2040's boot ROM, both checked against the shared folder's
// SHA256SUMS, and the flash file system in its file on the host, laid out on the Pico's flash.

import { createHash } from "node:crypto";
import { existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const IMAGE = "RPI_PICO-v1.27.0.bin";
export const BOOTROM = "bootrom-rp2040-b1.bin";
export const FLASH_SIZE = 2 * 1024 * 1024; // the Pico's W25Q16JV
export const FS_OFFSET = 0xa0000; // MICROPY_HW_FLASH_STORAGE_BYTES (1408 KiB) from the end
export const FS_SIZE = FLASH_SIZE - FS_OFFSET;

// A file of the shared folder, checked against its SHA256SUMS; `fail(text)` does not return.
function sharedFile(shared, name, fail) {
  const path = join(shared, name);
  if (!existsSync(path)) {
    fail(
      `no ${name} in ${shared}: give the folder that holds the MicroPython image and the ` +
        "RP2040 boot ROM (--shared DIR or MJTABLE_RP2040_DIR)",
    );
  }
  const data = readFileSync(path);
  const sums = join(shared, "SHA256SUMS");
  if (existsSync(sums)) {
    // sha256sum's lines: the digest, two spaces (or a space and "*"), the file's name
    const expected = readFileSync(sums, "utf8")
      .split("\n")
      .map((l) => l.trim().split(/\s+\*?/))
      .find(([, file]) => file === name)?.[0];
    const digest = createHash("sha256").update(data).digest("hex");
    if (expected && expected !== digest) {
      fail(`${path} does not match its SHA-256 in ${sums}: copy the shared folder again`);
    }
  }
  return data;
}

// The flash at power-on (the image, then the file system at FS_OFFSET), the boot ROM, and the
// file system's file opened for the chip's erases and programs to be written through to it.
export function loadFlash({ shared, fsPath, imagePath, fail }) {
  if (!fsPath) {
    fail("no --fs FILE: the chip needs its flash file system (made by the simulator)");
  }
  if (imagePath && !existsSync(imagePath)) {
    fail(`no image at ${imagePath}`);
  }
  const image = imagePath ? readFileSync(imagePath) : sharedFile(shared, IMAGE, fail);
  if (image.length > FS_OFFSET) {
    fail(`the image ${imagePath} (${image.length} bytes) runs into the file system at 0xa0000`);
  }
  const bootrom = sharedFile(shared, BOOTROM, fail);
  if (!existsSync(fsPath)) {
    fail(`no flash file system at ${fsPath}`);
  }
  const fsData = readFileSync(fsPath);
  if (fsData.length !== FS_SIZE) {
    fail(`${fsPath} holds ${fsData.length} bytes; the Pico's file system is ${FS_SIZE}`);
  }
  const initialFlash = new Uint8Array(FLASH_SIZE).fill(0xff);
  initialFlash.set(image, 0);
  initialFlash.set(fsData, FS_OFFSET);
  const fsFile = openSync(fsPath, "r+");
  return { initialFlash, bootrom, fsFile };
}
