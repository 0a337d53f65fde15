// Run a Python script under MicroPython (the official WebAssembly port) with protocol/ on its
// path: `node tools/micropython/run.mjs SCRIPT`. Exit status 1 when the script raises.
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const script = process.argv[2];
if (!script) {
  console.error("usage: node tools/micropython/run.mjs SCRIPT");
  process.exit(2);
}
const mp = await loadMicroPython({
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
});
mp.FS.mkdir("/protocol");
for (const name of readdirSync(join(root, "protocol"))) {
  if (name.endsWith(".py")) {
    mp.FS.writeFile("/protocol/" + name, readFileSync(join(root, "protocol", name)));
  }
}
try {
  mp.runPython("import sys\nsys.path.insert(0, '/')\n" + readFileSync(script, "utf8"));
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
