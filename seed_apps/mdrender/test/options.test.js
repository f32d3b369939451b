import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { OptionsError } from "../src/errors.js";
import { DEFAULT_OPTIONS, normalizeOptions } from "../src/options.js";

describe("options", () => {
  test("normalizeOptions without arguments returns the defaults, frozen", () => {
    const opts = normalizeOptions();
    assert.deepEqual(opts, DEFAULT_OPTIONS);
    assert.equal(Object.isFrozen(opts), true);
  });

  test("user options override defaults and undefined values are ignored", () => {
    const opts = normalizeOptions({ safe: true, tabSize: 2, softBreak: undefined });
    assert.equal(opts.safe, true);
    assert.equal(opts.tabSize, 2);
    assert.equal(opts.softBreak, "\n");
  });

  test("an unknown option name raises OptionsError listing the known options", () => {
    assert.throws(() => normalizeOptions({ sanitize: true }),
      (e) => e instanceof OptionsError && e.option === "sanitize" && /known options are safe, headingIds/.test(e.message));
  });

  test("options of the wrong type raise OptionsError naming the requirement", () => {
    assert.throws(() => normalizeOptions({ safe: "yes" }), /option "safe": must be a boolean/);
    assert.throws(() => normalizeOptions({ headingIdPrefix: 1 }), /must be a string/);
    assert.throws(() => normalizeOptions({ plugins: {} }), /must be an array of plugins/);
  });

  test("numeric options are range-checked", () => {
    assert.throws(() => normalizeOptions({ tabSize: 0 }), /from 1 to 16/);
    assert.throws(() => normalizeOptions({ tabSize: 17 }), OptionsError);
    assert.throws(() => normalizeOptions({ maxNesting: 0 }), /positive integer/);
    assert.equal(normalizeOptions({ maxNesting: 1 }).maxNesting, 1);
  });

  test("options must be a plain object", () => {
    assert.throws(() => normalizeOptions(null), (e) => e instanceof OptionsError && e.option === "options");
    assert.throws(() => normalizeOptions([]), OptionsError);
    assert.throws(() => normalizeOptions("safe"), OptionsError);
  });
});
