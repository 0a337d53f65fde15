// Run a Python script under MicroPython (the official WebAssembly port) with protocol/ and
// firmware/ (the packages that run on the board) on its path:
// `node tools/micropython/run.mjs SCRIPT [ARG...]` (the arguments are in sys.argv[1:]).
// When the script defines a function `more`, it is then called until it returns false: this
// port collects garbage only between calls from JavaScript, so a long run is cut into calls.
// Exit status 1 when the script raises.
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
// copy a package's .py files, its subpackages too, into the interpreter's file system
function copyPackage(rel) {
  mp.FS.mkdir("/" + rel);
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "__pycache__") {
      copyPackage(rel + "/" + entry.name);
    } else if (entry.name.endsWith(".py")) {
      mp.FS.writeFile("/" + rel + "/" + entry.name, readFileSync(join(root, rel, entry.name)));
    }
  }
}
copyPackage("protocol");
copyPackage("firmware");
const argv = JSON.stringify([script, ...process.argv.slice(3)]);
try {
  mp.runPython(
    "import sys\nsys.path.insert(0, '/')\nsys.argv[:] = " + argv + "\n" + readFileSync(script, "utf8"),
  );
  const more = mp.globals.get("more");
  if (typeof more === "function") {
    while (more()) {}
  }
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
