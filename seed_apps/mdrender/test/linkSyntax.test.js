import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  extractReferenceDefinitions, normalizeLabel, parseReferenceDefinition, scanInlineLinkTail,
  scanLinkDestination, scanLinkLabel, scanLinkTitle, skipSpace,
} from "../src/linkSyntax.js";

describe("linkSyntax", () => {
  test("normalizeLabel trims, collapses whitespace and case-folds", () => {
    assert.equal(normalizeLabel("  Foo \n  BAR "), normalizeLabel("foo bar"));
    assert.equal(normalizeLabel("Foo  bar"), "FOO BAR");
  });

  test("normalizeLabel folds sharp s like its upper-case expansion", () => {
    assert.equal(normalizeLabel("\u1e9e"), normalizeLabel("ss"));
    assert.equal(normalizeLabel("stra\u00dfe"), normalizeLabel("STRASSE"));
  });

  test("skipSpace skips spaces and tabs and at most one line ending", () => {
    assert.equal(skipSpace("a  \t b", 1), 5);
    assert.equal(skipSpace("x \n  y", 1), 5);
    assert.equal(skipSpace("x \n\n y", 1), 3);
  });

  test("scanLinkLabel returns the raw label and the index after the bracket", () => {
    assert.deepEqual(scanLinkLabel("[foo *b*]: x", 0), { label: "foo *b*", end: 9 });
    assert.deepEqual(scanLinkLabel("[a\\]b]", 0), { label: "a\\]b", end: 6 });
  });

  test("scanLinkLabel fails on nested brackets, blank labels, unclosed or overlong labels", () => {
    assert.equal(scanLinkLabel("[a[b]", 0), null);
    assert.equal(scanLinkLabel("[  ]", 0), null);
    assert.equal(scanLinkLabel("[abc", 0), null);
    assert.equal(scanLinkLabel(`[${"x".repeat(1000)}]`, 0), null);
    assert.equal(scanLinkLabel("abc", 0), null);
  });

  test("scanLinkDestination reads pointy-bracket destinations including spaces", () => {
    assert.deepEqual(scanLinkDestination("<my url> x", 0), { destination: "my url", end: 8 });
    assert.deepEqual(scanLinkDestination("<>", 0), { destination: "", end: 2 });
  });

  test("scanLinkDestination rejects pointy destinations with line breaks or unescaped <", () => {
    assert.equal(scanLinkDestination("<a\nb>", 0), null);
    assert.equal(scanLinkDestination("<a<b>", 0), null);
    assert.equal(scanLinkDestination("<abc", 0), null);
  });

  test("scanLinkDestination reads bare destinations with balanced parentheses", () => {
    assert.deepEqual(scanLinkDestination("foo(and(bar)) rest", 0), { destination: "foo(and(bar))", end: 13 });
    assert.deepEqual(scanLinkDestination("a)b", 0), { destination: "a", end: 1 });
    assert.equal(scanLinkDestination("a(b", 0), null);
    assert.equal(scanLinkDestination(" x", 0), null);
  });

  test("scanLinkDestination resolves escapes and entities and limits paren nesting", () => {
    assert.deepEqual(scanLinkDestination("a\\(b&amp;c", 0), { destination: "a(b&c", end: 10 });
    assert.equal(scanLinkDestination(`${"(".repeat(33)}x${")".repeat(33)}`, 0), null);
  });

  test("scanLinkTitle accepts the three title delimiters and unescapes the content", () => {
    assert.deepEqual(scanLinkTitle('"a \\"b\\""', 0), { title: 'a "b"', end: 9 });
    assert.deepEqual(scanLinkTitle("'x&amp;y'", 0), { title: "x&y", end: 9 });
    assert.deepEqual(scanLinkTitle("(t)", 0), { title: "t", end: 3 });
  });

  test("scanLinkTitle fails on unclosed titles, nested parens and blank lines", () => {
    assert.equal(scanLinkTitle('"abc', 0), null);
    assert.equal(scanLinkTitle("(a(b)", 0), null);
    assert.equal(scanLinkTitle('"a\n\nb"', 0), null);
    assert.equal(scanLinkTitle("x", 0), null);
  });

  test("scanInlineLinkTail parses destination and title inside parentheses", () => {
    assert.deepEqual(scanInlineLinkTail('( /u "t" )!', 0), { destination: "/u", title: "t", end: 10 });
    assert.deepEqual(scanInlineLinkTail("()", 0), { destination: "", title: null, end: 2 });
  });

  test("scanInlineLinkTail treats an unseparated quote as part of the destination and needs a closing parenthesis", () => {
    assert.deepEqual(scanInlineLinkTail('(/u"t")', 0), { destination: '/u"t"', title: null, end: 7 });
    assert.equal(scanInlineLinkTail('(/u "t"x)', 0), null);
    assert.equal(scanInlineLinkTail("(/u", 0), null);
    assert.equal(scanInlineLinkTail("[x]", 0), null);
    assert.equal(scanInlineLinkTail("(a b)", 0), null);
  });

  test("parseReferenceDefinition reads label, destination and title across lines", () => {
    assert.deepEqual(parseReferenceDefinition("[Foo]:\n/url\n'the title'\nrest", 0), {
      label: "FOO", destination: "/url", title: "the title", end: 24,
    });
  });

  test("parseReferenceDefinition drops a title followed by other text but keeps the definition", () => {
    assert.deepEqual(parseReferenceDefinition('[a]: /u\n"t" more', 0), { label: "A", destination: "/u", title: null, end: 8 });
    assert.equal(parseReferenceDefinition('[a]: /u "t" more', 0), null);
  });

  test("parseReferenceDefinition requires a colon and a destination", () => {
    assert.equal(parseReferenceDefinition("[a] /u", 0), null);
    assert.equal(parseReferenceDefinition("[a]:", 0), null);
  });

  test("extractReferenceDefinitions consumes leading definitions and keeps the first of duplicates", () => {
    const refs = new Map();
    const rest = extractReferenceDefinitions("[a]: /one\n[A]: /two 'T'\n[b]: <x y>\ntext [c]: /z", refs);
    assert.equal(rest, "text [c]: /z");
    assert.deepEqual([...refs], [["A", { destination: "/one", title: null }], ["B", { destination: "x y", title: null }]]);
  });

  test("extractReferenceDefinitions returns text unchanged when it starts with no definition", () => {
    const refs = new Map();
    assert.equal(extractReferenceDefinitions("[not]: a def? no", refs), "[not]: a def? no");
    assert.equal(refs.size, 0);
  });
});
