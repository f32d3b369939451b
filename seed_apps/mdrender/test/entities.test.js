import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  NAMED_ENTITIES, decodeEntities, decodeNumericReference, escapeHtml, isAsciiPunctuation,
  matchEntity, unescapeString,
} from "../src/entities.js";

describe("entities", () => {
  test("escapeHtml escapes ampersand, angle brackets and double quotes", () => {
    assert.equal(escapeHtml(`a & b < c > d "e"`), "a &amp; b &lt; c &gt; d &quot;e&quot;");
  });

  test("escapeHtml leaves single quotes and plain text unchanged", () => {
    assert.equal(escapeHtml("it's fine"), "it's fine");
  });

  test("isAsciiPunctuation accepts every ASCII punctuation character", () => {
    for (const ch of "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") assert.equal(isAsciiPunctuation(ch), true, ch);
  });

  test("isAsciiPunctuation rejects letters, spaces, unicode punctuation and longer strings", () => {
    assert.equal(isAsciiPunctuation("a"), false);
    assert.equal(isAsciiPunctuation(" "), false);
    assert.equal(isAsciiPunctuation("\u2014"), false);
    assert.equal(isAsciiPunctuation("!!"), false);
  });

  test("decodeNumericReference decodes decimal and hexadecimal code points", () => {
    assert.equal(decodeNumericReference("35", false), "#");
    assert.equal(decodeNumericReference("1F600", true), "\u{1F600}");
  });

  test("decodeNumericReference maps zero, surrogates and out-of-range values to U+FFFD", () => {
    assert.equal(decodeNumericReference("0", false), "\ufffd");
    assert.equal(decodeNumericReference("D800", true), "\ufffd");
    assert.equal(decodeNumericReference("110000", true), "\ufffd");
  });

  test("matchEntity decodes a known named reference and reports its length", () => {
    assert.deepEqual(matchEntity("x &copy; y", 2), { value: "\u00a9", length: 6 });
  });

  test("matchEntity decodes decimal and hex numeric references", () => {
    assert.deepEqual(matchEntity("&#65;", 0), { value: "A", length: 5 });
    assert.deepEqual(matchEntity("&#x41;", 0), { value: "A", length: 6 });
    assert.deepEqual(matchEntity("&#X41;", 0), { value: "A", length: 6 });
  });

  test("matchEntity rejects unknown names, missing semicolons and too many digits", () => {
    assert.equal(matchEntity("&bogus;", 0), null);
    assert.equal(matchEntity("&copy", 0), null);
    assert.equal(matchEntity("&#12345678;", 0), null);
    assert.equal(matchEntity("&#x1234567;", 0), null);
    assert.equal(matchEntity("a &copy;", 0), null);
  });

  test("named entity table includes multi-code-point entries", () => {
    assert.equal(NAMED_ENTITIES.ngE, "\u2267\u0338");
    assert.equal(matchEntity("&ngE;", 0).value, "\u2267\u0338");
  });

  test("decodeEntities replaces every valid reference and keeps invalid ones", () => {
    assert.equal(decodeEntities("&lt;b&gt; &amp;&amp; &nope; & &#33;"), "<b> && &nope; & !");
  });

  test("decodeEntities returns text without ampersands unchanged", () => {
    assert.equal(decodeEntities("plain"), "plain");
  });

  test("unescapeString removes backslashes before ASCII punctuation only", () => {
    assert.equal(unescapeString("\\*a\\b\\\\"), "*a\\b\\");
  });

  test("unescapeString decodes entities but not escaped ampersands", () => {
    assert.equal(unescapeString("a&amp;b \\&amp;"), "a&b &amp;");
  });

  test("unescapeString keeps a trailing backslash and a stray ampersand", () => {
    assert.equal(unescapeString("a & b\\"), "a & b\\");
  });
});
