import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { InputError, MarkdownError } from "../src/errors.js";
import {
  assertMarkdownString, expandLeadingTabs, isBlank, leadingSpaces, normalizeNewlines, prepareSource,
  splitLines, stripBom, stripIndent,
} from "../src/source.js";

describe("source", () => {
  test("normalizeNewlines converts CRLF and lone CR to LF", () => {
    assert.equal(normalizeNewlines("a\r\nb\rc\nd"), "a\nb\nc\nd");
  });

  test("stripBom removes only a leading byte-order mark", () => {
    assert.equal(stripBom("\ufeffabc"), "abc");
    assert.equal(stripBom("a\ufeffb"), "a\ufeffb");
  });

  test("expandLeadingTabs advances to the next tab stop", () => {
    assert.equal(expandLeadingTabs("\tx"), "    x");
    assert.equal(expandLeadingTabs("  \tx"), "    x");
    assert.equal(expandLeadingTabs(" \t\tx"), "        x");
  });

  test("expandLeadingTabs keeps tabs after the first non-blank character", () => {
    assert.equal(expandLeadingTabs("a\tb"), "a\tb");
    assert.equal(expandLeadingTabs("\ta\tb"), "    a\tb");
  });

  test("expandLeadingTabs honours a custom tab size and start column", () => {
    assert.equal(expandLeadingTabs("\tx", 2), "  x");
    assert.equal(expandLeadingTabs("\tx", 4, 1), "   x");
  });

  test("splitLines drops one trailing empty line and keeps inner blank lines", () => {
    assert.deepEqual(splitLines("a\n\nb\n"), ["a", "", "b"]);
    assert.deepEqual(splitLines("a\n\n"), ["a", ""]);
    assert.deepEqual(splitLines(""), []);
  });

  test("prepareSource normalizes BOM, newlines, NUL characters and leading tabs", () => {
    assert.deepEqual(prepareSource("\ufeffa\u0000\r\n\tb\r\n"), ["a\ufffd", "    b"]);
  });

  test("prepareSource uses the tabSize option", () => {
    assert.deepEqual(prepareSource("\tb", { tabSize: 2 }), ["  b"]);
  });

  test("prepareSource rejects non-string input with an InputError naming the type", () => {
    assert.throws(() => prepareSource(42), (err) => err instanceof InputError && /got number/.test(err.message));
    assert.throws(() => assertMarkdownString(null), (err) => err instanceof MarkdownError && /got null/.test(err.message));
  });

  test("leadingSpaces counts only leading space characters", () => {
    assert.equal(leadingSpaces("   a b"), 3);
    assert.equal(leadingSpaces("a"), 0);
    assert.equal(leadingSpaces("    "), 4);
  });

  test("isBlank is true for empty and whitespace-only lines", () => {
    assert.equal(isBlank(""), true);
    assert.equal(isBlank(" \t "), true);
    assert.equal(isBlank("  x"), false);
  });

  test("stripIndent removes at most the requested number of spaces", () => {
    assert.equal(stripIndent("      x", 4), "  x");
    assert.equal(stripIndent("  x", 4), "x");
  });
});
