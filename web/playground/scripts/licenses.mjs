// Writes the licence texts of every npm package the bundle contains (read from esbuild's
// metafile) to src/aurane/playground/static/THIRD_PARTY_LICENSES.txt.
import { readFileSync, writeFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const meta = JSON.parse(readFileSync("build-meta.json", "utf8"));
const packages = new Set();
for (const input of Object.keys(meta.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}
const parts = [];
for (const name of [...packages].sort()) {
  const dir = join("node_modules", name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? readFileSync(join(dir, file), "utf8").trim() : `License: ${pkg.license}`;
  parts.push(`${name} ${pkg.version} (${pkg.license})\n\n${text}\n`);
}
writeFileSync(
  "../../src/aurane/playground/static/THIRD_PARTY_LICENSES.txt",
  `The playground bundle (playground.js) contains these packages:\n\n${parts.join("\n" + "-".repeat(72) + "\n\n")}`,
);
rmSync("build-meta.json");
