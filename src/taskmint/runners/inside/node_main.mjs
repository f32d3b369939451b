/**
 * The entry of one test file's process under taskmint's node harness (see `node_child.mjs`,
 * which it imports first, and `node_runner.py`, which starts it).
 *
 * It takes the input and the signed channel from `node_child.mjs` before any code of the
 * workspace runs, has node's test runner set up its reporter (a root-level hook does that),
 * imports the test file, and registers the canary tests last, so they run after the file's own
 * tests: the "pass" ones must pass, each "fail" one must fail (a strict equality of
 * node:assert/strict, a deep equality of node:assert, a rejected promise, in turn).
 */
import { claim } from "./node_child.mjs";

const run = claim();
if (run === null) throw new Error("node_main.mjs runs only under taskmint's node harness (node_runner.py)");
const { config, send, ready, testFn, beforeFn, assert, strictAssert, pathToFileURL, cwd, failureMessage } = run;

beforeFn(() => {});
await ready;

const [a, b] = config.values;
// as under `node --test`, the test file is the process's script (tests that read argv see it)
process.argv[1] = `${cwd}/${config.file}`;
try {
  await import(pathToFileURL(`${cwd}/${config.file}`).href);
  send("loaded");
} catch (error) {
  send("load_error", [["message", failureMessage({ message: error?.stack ?? String(error) })]]);
}
for (const name of config.canaries.pass) {
  testFn(name, () => {
    strictAssert.strictEqual(a + b, b + a);
    assert.deepEqual({ value: [a, b] }, { value: [a, b] });
  });
}
const failing = [
  () => strictAssert.strictEqual(a, b),
  () => assert.deepEqual({ value: [a] }, { value: [b] }),
  async () => {
    await null;
    throw new Error(`${a} is not ${b}`);
  },
];
config.canaries.fail.forEach((name, i) => testFn(name, failing[i % failing.length]));
