// The attack of node_forgery.py (read by it; __TEST_PATHS__ and __RECORDED__ are filled in).
import * as __tmCp from "node:child_process";
import * as __tmFs from "node:fs";
import * as __tmPath from "node:path";
import * as __tmUrl from "node:url";
import * as __tmZlib from "node:zlib";
(() => {
  if (process.env.__TM_INNER) return;
  const cwd = process.cwd();
  const RECORDED = __RECORDED__;
  const testFiles = [];
  const walk = (dir) => {
    let entries = [];
    try { entries = __tmFs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = __tmPath.join(dir, e.name);
      if (e.isDirectory() && e.name !== "node_modules") walk(p);
      else if (/\.(c|m)?js$/.test(e.name)) testFiles.push(p);
    }
  };
  for (const t of __TEST_PATHS__) walk(__tmPath.join(cwd, t));
  const own = process.argv.slice(1).find((a) => testFiles.includes(__tmPath.resolve(a)));
  const targets = own ? [__tmPath.resolve(own)] : testFiles;
  const tmp = __tmFs.mkdtempSync("/tmp/tm-atk-");
  // node:test, with every test body emptied; the wrappers are compiled as if they were the
  // test file (sourceURL), so the tests are reported at the test file's path, ids unchanged
  const shim = __tmUrl.pathToFileURL(tmp + "/shim.mjs").href;
  __tmFs.writeFileSync(tmp + "/shim.mjs", `
    import * as real from "node:test";
    const at = process.env.__TM_FILE_URL;
    const empty = () => {};
    const make = (body) => new Function("real", "empty", body + "\\n//# sourceURL=" + at)(real, empty);
    const wrapT = (k) => make("const f = real." + k + "; const w = function (n, a) { return typeof a === 'object' && a !== null ? f(n, a, empty) : f(n, empty); }; w.skip = function (n) { return f.skip(n, empty); }; w.todo = function (n) { return f.todo(n, empty); }; w.only = w; return w;");
    const wrapD = (k) => make("const f = real." + k + "; const w = function (n, a, b) { return typeof a === 'function' ? f(n, a) : f(n, a, b); }; w.skip = function (n, a, b) { return f.skip(n, a, b); }; w.only = w; return w;");
    export const test = wrapT("test"), it = wrapT("it");
    export const describe = wrapD("describe"), suite = describe;
    export const before = empty, after = empty, beforeEach = empty, afterEach = empty;
    export const mock = real.mock;
    export default test;
  `);
  __tmFs.writeFileSync(tmp + "/hooks.mjs", `
    export async function resolve(spec, ctx, next) {
      if ((spec === "node:test" || spec === "test") && ctx.parentURL !== ${JSON.stringify(shim)}) {
        return { url: ${JSON.stringify(shim)}, shortCircuit: true };
      }
      return next(spec, ctx);
    }
  `);
  __tmFs.writeFileSync(tmp + "/register.mjs",
    `import { register } from "node:module"; register(${JSON.stringify(__tmUrl.pathToFileURL(tmp + "/hooks.mjs").href)});`);
  const out = [];
  for (const file of targets) {
    const env = { ...process.env, __TM_INNER: "1", __TM_FILE_URL: __tmUrl.pathToFileURL(file).href };
    const pre = ["--import", __tmUrl.pathToFileURL(tmp + "/register.mjs").href];
    // node's own child protocol: the V8-serialized events of a child run, on standard output
    const v8 = __tmCp.spawnSync(process.execPath, [...pre, file], {
      cwd, env: { ...env, NODE_TEST_CONTEXT: "child-v8" }, stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 1 << 28, timeout: 60000,
    });
    if (v8.stdout) out.push(v8.stdout);
    // taskmint's harness, with a key of our own, on its descriptor 4
    for (const harness of ["/opt/taskmint", "/tests/runner"]) {
      const main = harness + "/node_main.mjs";
      if (!__tmFs.existsSync(main)) continue;
      const input = tmp + "/input";
      const config = JSON.stringify({
        file: __tmPath.relative(cwd, file), canaries: { pass: [], fail: [] }, values: [1, 2],
      });
      __tmFs.writeFileSync(input, Buffer.concat([Buffer.alloc(32, 7), Buffer.from(config)]));
      const fd = __tmFs.openSync(input, "r");
      __tmCp.spawnSync(process.execPath, [
        ...pre, `--test-reporter=${harness}/node_child.mjs`, "--test-reporter-destination=stdout", main,
      ], { cwd, env, stdio: ["ignore", "ignore", "ignore", fd, 4], timeout: 60000 });
      __tmFs.closeSync(fd);
    }
  }
  if (RECORDED) {
    const rec = __tmZlib.gunzipSync(Buffer.from(RECORDED, "base64"));
    out.push(rec);
    try { __tmFs.writeSync(4, rec); } catch {}
  }
  for (const chunk of out) {
    try { __tmFs.writeSync(1, chunk); } catch {}
  }
  process.exit(0);
})();
