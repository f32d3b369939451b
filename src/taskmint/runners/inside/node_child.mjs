/**
 * The reporter of one test file's process under taskmint's node harness (`node_runner.py`
 * starts the process, `node_main.mjs` is its entry and imports this module first).
 *
 * The process is started as
 *   node --test-reporter=<this file> --test-reporter-destination=stdout <node_main.mjs>
 * with two inherited descriptors: 3, the secret input (32 raw bytes of a key, then JSON
 * {"file": the test file relative to the working folder, "canaries": {"pass": [names],
 * "fail": [names]}, "values": [a, b]}), and 4, the event channel to the harness. Node's test
 * runner loads its reporter by URL, so it gets this same module instance: everything the module
 * keeps is in its closure, and `claim()` hands the entry its share once.
 *
 * Before any code of the workspace runs, it:
 * - reads the input from descriptor 3 and closes it; the key becomes a KeyObject (its bytes
 *   live outside the JavaScript heap) and its buffer is zeroed;
 * - keeps its own references to what it signs and writes with (the HMAC, `fs.writeSync`,
 *   `JSON.stringify` of strings and numbers only), so later patches of those globals do not
 *   reach it;
 * - freezes the exports of `node:test` and `node:assert` (and `node:assert/strict`), and
 *   locks CommonJS's loader, so code under test cannot swap the functions the test file
 *   registers its tests with or asserts with;
 * - becomes the test run's reporter (the first and only call of this module's default
 *   export; later calls get nothing).
 * The entry then imports the test file, and registers the canary tests last.
 *
 * Every record sent on descriptor 4 is one line: `<hex HMAC-SHA256 of JSON under the key>
 * <JSON>`, the JSON holding "seq" (0, 1, 2, ... in order). Records:
 *   {"seq", "type": "ready"}                       the reporter is in place
 *   {"seq", "type": "loaded"}                      the test file was imported
 *   {"seq", "type": "load_error", "message"}       ... or failed to load
 *   {"seq", "type": "test", "id", "name", "path", "file", "loc", "outcome", "duration",
 *    "message", "is_suite"}                        one per finished test or suite
 *   {"seq", "type": "end", "count"}                the run ended; count: records before it
 * Test ids are as taskmint's earlier node reporter made them: "<file>::<suite> > <test>",
 * <file> the file of the test's definition relative to the working folder, a repeated name
 * among siblings suffixed " #2", " #3", ...
 *
 * The harness trusts nothing else the process does: its standard output and error are never
 * read as results. See `node_runner.py` for what the harness checks.
 */
import fs from "node:fs";
import crypto from "node:crypto";
import path from "node:path";
import url from "node:url";
import module from "node:module";
import nodeTest from "node:test";
import assert from "node:assert";
import strictAssert from "node:assert/strict";

const INPUT_FD = 3;
const CHANNEL_FD = 4;
const MESSAGE_LIMIT = 500;

// -- what the module keeps for itself, taken before any code of the workspace runs ----------
const writeSync = fs.writeSync;
const readSync = fs.readSync;
const closeSync = fs.closeSync;
const createHmac = crypto.createHmac;
const createSecretKey = crypto.createSecretKey;
const hmacProto = Object.getPrototypeOf(createHmac("sha256", "k"));
const hmacUpdate = hmacProto.update;
const hmacDigest = hmacProto.digest;
const apply = Reflect.apply;
const stringify = JSON.stringify;
const parse = JSON.parse;
const isInteger = Number.isInteger;
const hasOwn = Object.hasOwn;
const ArrayIsArray = Array.isArray;
const cwd = process.cwd();
const relative = path.relative;
const isAbsolute = path.isAbsolute;
const sep = path.sep;
const fileURLToPath = url.fileURLToPath;
const pathToFileURL = url.pathToFileURL;
const testFn = nodeTest.test;
const beforeFn = nodeTest.before;

function readInput() {
  const stat = fs.fstatSync(INPUT_FD);
  if (!stat.isFIFO() && !stat.isFile()) throw new Error("descriptor 3 is not the harness's input");
  const chunks = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.alloc(65536);
    let n;
    try {
      n = readSync(INPUT_FD, buf, 0, buf.length, null);
    } catch (error) {
      if (error.code === "EAGAIN") continue;
      throw error;
    }
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  closeSync(INPUT_FD);
  const all = Buffer.concat(chunks, total);
  for (const chunk of chunks) chunk.fill(0);
  const keyObject = createSecretKey(all.subarray(0, 32));
  const config = parse(all.subarray(32).toString("utf8"));
  all.fill(0);
  return { keyObject, config };
}

/** The channel on a descriptor of its own that no process this one starts inherits (node opens
 * files close-on-exec; the inherited 4 is not). */
function privateChannel() {
  try {
    const fd = fs.openSync(`/proc/self/fd/${CHANNEL_FD}`, "w");
    closeSync(CHANNEL_FD);
    return fd;
  } catch {
    return CHANNEL_FD;
  }
}

// A process with no input on 3 (node started by a test with this process's flags, which name
// this reporter) is not the harness's: the module then reports nothing and hands out nothing.
let input = null;
try {
  input = readInput();
} catch {
  input = null;
}
const KEY = input?.keyObject;
const CONFIG = input?.config;
const CHANNEL = input === null ? -1 : privateChannel();
let seq = 0;

/** A JSON object from [key, value] pairs whose values are strings, numbers, booleans, null or
 * arrays of strings: no toJSON or getter of the workspace's can change what is signed. */
function encode(pairs) {
  let out = "{";
  for (let i = 0; i < pairs.length; i += 1) {
    const [key, value] = pairs[i];
    let text;
    if (ArrayIsArray(value)) {
      const items = [];
      for (let j = 0; j < value.length; j += 1) items[j] = stringify(`${value[j]}`);
      text = `[${items.join(",")}]`;
    } else if (value === null || value === undefined) text = "null";
    else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      text = stringify(value);
    } else text = stringify(`${value}`);
    out += `${i === 0 ? "" : ","}${stringify(key)}:${text}`;
  }
  return `${out}}`;
}

function send(type, pairs = []) {
  const json = encode([["seq", seq], ["type", type], ...pairs]);
  seq += 1;
  const mac = createHmac("sha256", KEY);
  apply(hmacUpdate, mac, [json, "utf8"]);
  const line = `${apply(hmacDigest, mac, ["hex"])} ${json}\n`;
  try {
    writeSync(CHANNEL, line);
  } catch {
    // the channel is gone: the harness reads what it got, and a missing end is a crash
  }
}

// -- locking down what the tests are registered and checked with ------------------------------
function deepFreeze(value, seen = new Set()) {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return;
  if (seen.has(value)) return;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    const desc = Object.getOwnPropertyDescriptor(value, key);
    if (desc && hasOwn(desc, "value") && key !== "prototype") deepFreeze(desc.value, seen);
  }
  Object.freeze(value);
}
deepFreeze(nodeTest);
deepFreeze(assert);
deepFreeze(strictAssert);
for (const name of ["_load", "_resolveFilename"]) {
  Object.defineProperty(module.Module, name, { writable: false, configurable: false });
}
Object.defineProperty(module.Module.prototype, "require", { writable: false, configurable: false });

// -- the reporter -------------------------------------------------------------------------------
let claimed = false;
let announceReady;
const ready = new Promise((resolve) => {
  announceReady = resolve;
});

function relativeFile(file) {
  if (typeof file !== "string" || file === "") return "<unknown>";
  let name = file;
  if (name.startsWith("file:")) {
    try {
      name = fileURLToPath(name);
    } catch {
      return name;
    }
  }
  const rel = isAbsolute(name) ? relative(cwd, name) : name;
  return rel.split(sep).join("/");
}

function truncate(text) {
  const trimmed = `${text}`.trim();
  return trimmed.length > MESSAGE_LIMIT ? `${trimmed.slice(0, MESSAGE_LIMIT - 3)}...` : trimmed;
}

function failureMessage(error) {
  if (error === undefined || error === null) return "failed";
  try {
    const cause = error.cause;
    if (cause !== undefined && cause !== null && typeof cause.message === "string") {
      const name = typeof cause.name === "string" && cause.name !== "" ? cause.name : "Error";
      return truncate(cause.message === "" ? name : `${name}: ${cause.message}`);
    }
    if (cause !== undefined && cause !== null) return truncate(String(cause));
    return truncate(typeof error.message === "string" ? error.message : String(error));
  } catch {
    return "failed";
  }
}

function own(object, key) {
  return object !== null && typeof object === "object" && hasOwn(object, key) ? object[key] : undefined;
}

function flagged(data, key) {
  const value = own(data, key);
  return value !== undefined && value !== null && value !== false;
}

/**
 * The reporter node's test runner calls (once: the module's own run). Yields nothing: every
 * record goes to the channel, signed.
 */
export default async function* taskmintChildReporter(source) {
  if (claimed || input === null) {
    for await (const _ of source); // the run goes on; this reporter tells nothing
    return;
  }
  claimed = true;
  send("ready");
  announceReady();
  const stacks = new Map(); // file -> [{raw, unique}] by nesting
  const occurrences = new Map();
  const uniqueName = (rel, parents, name) => {
    const key = `${rel}::${parents.map((f) => f.unique).join(" > ")}\u0000${name}`;
    const n = (occurrences.get(key) ?? 0) + 1;
    occurrences.set(key, n);
    return n === 1 ? name : `${name} #${n}`;
  };
  const stackFor = (rel) => {
    let stack = stacks.get(rel);
    if (stack === undefined) {
      stack = [];
      stacks.set(rel, stack);
    }
    return stack;
  };
  for await (const event of source) {
    const type = own(event, "type");
    const data = own(event, "data") ?? {};
    if (type === "test:start") {
      const rel = relativeFile(own(data, "file"));
      const stack = stackFor(rel);
      const nesting = isInteger(own(data, "nesting")) ? own(data, "nesting") : 0;
      stack.length = Math.min(stack.length, nesting);
      const name = `${own(data, "name")}`;
      stack.push({ raw: name, unique: uniqueName(rel, stack, name), done: false });
      continue;
    }
    if (type !== "test:pass" && type !== "test:fail") continue;
    const failed = type === "test:fail";
    const details = own(data, "details") ?? {};
    const durationMs = own(details, "duration_ms");
    const rel = relativeFile(own(data, "file"));
    const stack = stackFor(rel);
    const nesting = isInteger(own(data, "nesting")) ? own(data, "nesting") : 0;
    const name = `${own(data, "name")}`;
    let frame = stack[nesting];
    if (frame === undefined || frame.raw !== name || frame.done) {
      stack.length = Math.min(stack.length, nesting);
      frame = { raw: name, unique: uniqueName(rel, stack, name), done: false };
      stack.push(frame);
    }
    frame.done = true;
    const names = stack.slice(0, nesting + 1).map((f) => f.unique);
    let outcome;
    if (flagged(data, "todo")) outcome = "todo";
    else if (flagged(data, "skip")) outcome = "skipped";
    else outcome = failed ? "failed" : "passed";
    const line = own(data, "line");
    const column = own(data, "column");
    send("test", [
      ["id", `${rel}::${names.join(" > ")}`],
      ["name", name],
      ["path", names],
      ["file", rel],
      ["loc", `${rel}:${isInteger(line) ? line : 0}:${isInteger(column) ? column : 0}`],
      ["outcome", outcome],
      ["duration", typeof durationMs === "number" ? durationMs / 1000 : 0],
      ["message", failed ? failureMessage(own(details, "error")) : null],
      ["is_suite", own(details, "type") === "suite"],
    ]);
  }
  send("end", [["count", seq]]);
}

let handedOut = false;

/**
 * What the entry (`node_main.mjs`) runs the file with: the input and a way to send records.
 * Handed out once, to the entry, before any code of the workspace runs; later calls get null.
 */
export function claim() {
  if (handedOut || input === null) return null;
  handedOut = true;
  return { config: CONFIG, send, ready, testFn, beforeFn, assert, strictAssert, pathToFileURL, cwd, failureMessage };
}
