/**
 * taskmint reporter for Node 20's built-in test runner (`node --test`).
 *
 * Usage:
 *   node --test --test-reporter=/abs/path/node_reporter.mjs \
 *        --test-reporter-destination=/some/report.jsonl test/
 *
 * Output: JSON Lines, one object per line, each line terminated by "\n".
 *
 *   Every record also has "nonce": the value of TASKMINT_NONCE when the reporter loaded.
 *
 *   {"type":"test", "id":"<file>::<suite> > <nested suite> > <test>", "file":"<file>",
 *    "name":"<test name>", "outcome":"passed"|"failed"|"skipped"|"todo",
 *    "duration":<seconds, float>, "message":<short failure message or null>,
 *    "is_suite":<true for describe() suites>}
 *       One record per finished test, leaf tests and suites alike, in the order Node reports
 *       them (definition order within a file, children before their parent). <file> is the test
 *       file relative to process.cwd(), with "/" separators. When siblings in the same file and
 *       suite share a name, the second and later ones get " #2", " #3", ... appended (to their
 *       name part of the id only; "name" keeps the raw name), so ids are unique and stable.
 *       Cancelled tests (e.g. a timeout, a failing hook) are "failed".
 *
 *   {"type":"file_error", "id":"<file>", "file":"<file>", "name":"<file>", "outcome":"failed",
 *    "duration":<seconds>, "message":"test failed (exit code 1)", "is_suite":false}
 *       The test file's process failed for a reason other than its own failing tests: it did
 *       not load (syntax error, missing import), crashed, or exited non-zero. Node reports this
 *       as a failing test named after the file's absolute path; the reporter never reads the
 *       file's stdout/stderr, so the message only carries what Node's event says.
 *
 *   {"type":"finish", "counts":{"tests":n, "suites":n, "passed":n, "failed":n, "skipped":n,
 *    "todo":n, "file_errors":n}, "node_summary":{"tests":n, "pass":n, ...}}
 *       Always the last line. counts.passed/failed/skipped/todo count leaf tests only (not
 *       suites), like Node's own summary; node_summary holds Node's closing diagnostics
 *       ("tests 12", "pass 11", ...) when Node emitted them, else {}.
 *
 * Only Node's structured events (test:start, test:pass, test:fail, test:diagnostic) are used;
 * test:stdout / test:stderr are ignored. Ids of tests whose names contain " > " or "::" are
 * still unique (the counter works on the full path) but not unambiguous to split.
 */
import path from "node:path";

// Every record carries the per-run nonce taskmint passes in TASKMINT_NONCE; it is removed from
// the environment at once so that the test files' processes, started later, never see it.
const NONCE = process.env.TASKMINT_NONCE ?? null;
delete process.env.TASKMINT_NONCE;

const MESSAGE_LIMIT = 500;
const SUMMARY_KEYS = new Set(["tests", "suites", "pass", "fail", "cancelled", "skipped", "todo", "duration_ms"]);

/** File path relative to the working directory, with "/" separators. */
function relativeFile(file, cwd) {
  if (typeof file !== "string" || file === "") return "<unknown>";
  const rel = path.isAbsolute(file) ? path.relative(cwd, file) : file;
  return rel.split(path.sep).join("/");
}

/** True for the synthetic test Node creates for each test file (named by its absolute path). */
function isFileWrapper(data) {
  return data.nesting === 0 && typeof data.file === "string" && data.name === data.file;
}

function truncate(text) {
  const trimmed = text.trim();
  return trimmed.length > MESSAGE_LIMIT ? `${trimmed.slice(0, MESSAGE_LIMIT - 3)}...` : trimmed;
}

/** A short, single-record description of a test:fail event's error. */
function failureMessage(error) {
  if (error === undefined || error === null) return "failed";
  const cause = error.cause;
  if (cause instanceof Error || (cause !== null && typeof cause === "object" && typeof cause.message === "string")) {
    const name = typeof cause.name === "string" && cause.name !== "" ? cause.name : "Error";
    return truncate(cause.message === "" ? name : `${name}: ${cause.message}`);
  }
  if (cause !== undefined && cause !== null) return truncate(String(cause));
  return truncate(typeof error.message === "string" ? error.message : String(error));
}

function fileErrorMessage(error) {
  let message = failureMessage(error);
  if (error && error.signal) message += ` (signal ${error.signal})`;
  else if (error && error.exitCode !== undefined && error.exitCode !== null) message += ` (exit code ${error.exitCode})`;
  return message;
}

function isSet(flag) {
  return flag !== undefined && flag !== null && flag !== false;
}

/**
 * Node test-runner reporter: consumes the event stream, yields JSON lines (see header).
 * @param {AsyncIterable<{type: string, data: object}>} source
 */
export default async function* taskmintReporter(source) {
  const cwd = process.cwd();
  const stacks = new Map(); // file -> [{raw, unique, done}] indexed by nesting
  const occurrences = new Map(); // "<file>::<parent path>\0<name>" -> times seen
  const counts = { tests: 0, suites: 0, passed: 0, failed: 0, skipped: 0, todo: 0, file_errors: 0 };
  const nodeSummary = {};

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
    const data = event.data ?? {};
    if (event.type === "test:start") {
      if (isFileWrapper(data)) continue;
      const rel = relativeFile(data.file, cwd);
      const stack = stackFor(rel);
      const nesting = Number.isInteger(data.nesting) ? data.nesting : 0;
      stack.length = Math.min(stack.length, nesting);
      stack.push({ raw: data.name, unique: uniqueName(rel, stack, data.name), done: false });
      continue;
    }
    if (event.type === "test:diagnostic") {
      if (data.file === undefined) {
        const match = /^(\w+) (\d+(?:\.\d+)?)$/.exec(String(data.message));
        if (match && SUMMARY_KEYS.has(match[1])) nodeSummary[match[1]] = Number(match[2]);
      }
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;

    const failed = event.type === "test:fail";
    const details = data.details ?? {};
    const duration = typeof details.duration_ms === "number" ? details.duration_ms / 1000 : 0;
    const rel = relativeFile(data.file, cwd);

    if (isFileWrapper(data)) {
      // Reported on its own only when the file produced no test results or failed for a
      // reason other than failing subtests (those are already recorded individually).
      if (!failed || (details.error && details.error.failureType === "subtestsFailed")) continue;
      counts.file_errors += 1;
      yield `${JSON.stringify({
        nonce: NONCE, type: "file_error", id: rel, file: rel, name: rel, outcome: "failed",
        duration, message: fileErrorMessage(details.error), is_suite: false,
      })}\n`;
      continue;
    }

    const stack = stackFor(rel);
    const nesting = Number.isInteger(data.nesting) ? data.nesting : 0;
    let frame = stack[nesting];
    if (frame === undefined || frame.raw !== data.name || frame.done) {
      // No matching test:start (should not happen): derive the name the same way.
      stack.length = Math.min(stack.length, nesting);
      frame = { raw: data.name, unique: uniqueName(rel, stack, data.name), done: false };
      stack.push(frame);
    }
    frame.done = true;
    const pathNames = stack.slice(0, nesting + 1).map((f) => f.unique);

    let outcome;
    if (isSet(data.todo)) outcome = "todo";
    else if (isSet(data.skip)) outcome = "skipped";
    else outcome = failed ? "failed" : "passed";
    const isSuite = details.type === "suite";

    if (isSuite) counts.suites += 1;
    else {
      counts.tests += 1;
      counts[outcome] += 1;
    }
    yield `${JSON.stringify({
      nonce: NONCE, type: "test", id: `${rel}::${pathNames.join(" > ")}`, file: rel, name: data.name, outcome,
      duration, message: failed ? failureMessage(details.error) : null, is_suite: isSuite,
    })}\n`;
  }
  yield `${JSON.stringify({ nonce: NONCE, type: "finish", counts, node_summary: nodeSummary })}\n`;
}
