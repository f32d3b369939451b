import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SAFE_SCHEMES, getScheme, isSafeUrl, normalizeUri } from "../src/urls.js";

describe("urls", () => {
  test("normalizeUri keeps reserved and unreserved URL characters", () => {
    const url = "https://ex.com/a-b_c.d~e/?q=1&r=[2]#frag@x!$'()*+,;=";
    assert.equal(normalizeUri(url), url);
  });

  test("normalizeUri percent-encodes spaces, quotes, backslashes and angle brackets", () => {
    assert.equal(normalizeUri("a b\"c\\d<e>"), "a%20b%22c%5Cd%3Ce%3E");
  });

  test("normalizeUri preserves existing escapes and encodes a lone percent sign", () => {
    assert.equal(normalizeUri("%20ok%zz%4"), "%20ok%25zz%254");
  });

  test("normalizeUri encodes non-ASCII characters as UTF-8 bytes", () => {
    assert.equal(normalizeUri("\u00e4/\u4f8b"), "%C3%A4/%E4%BE%8B");
    assert.equal(normalizeUri("\u{1F600}"), "%F0%9F%98%80");
  });

  test("normalizeUri replaces a lone surrogate with the encoded replacement character", () => {
    assert.equal(normalizeUri("a\ud800b"), "a%EF%BF%BDb");
  });

  test("getScheme returns the lower-cased scheme of absolute URLs", () => {
    assert.equal(getScheme("HTTPS://x"), "https");
    assert.equal(getScheme("mailto:a@b.c"), "mailto");
  });

  test("getScheme returns null for relative URLs and one-letter schemes", () => {
    assert.equal(getScheme("/path"), null);
    assert.equal(getScheme("C:/windows"), null);
    assert.equal(getScheme("#top"), null);
  });

  test("getScheme ignores whitespace and control characters hidden inside the scheme", () => {
    assert.equal(getScheme(" java\tscript:alert(1)"), "javascript");
  });

  test("isSafeUrl accepts relative URLs and every scheme on the safe list", () => {
    assert.equal(isSafeUrl("docs/page.html"), true);
    for (const scheme of SAFE_SCHEMES) assert.equal(isSafeUrl(`${scheme}:x`), true, scheme);
  });

  test("isSafeUrl rejects script and file schemes", () => {
    assert.equal(isSafeUrl("javascript:alert(1)"), false);
    assert.equal(isSafeUrl("VBScript:x"), false);
    assert.equal(isSafeUrl("file:///etc/passwd"), false);
  });

  test("isSafeUrl allows data URLs only for images of common raster types", () => {
    assert.equal(isSafeUrl("data:image/png;base64,AAA", { image: true }), true);
    assert.equal(isSafeUrl("data:image/png;base64,AAA"), false);
    assert.equal(isSafeUrl("data:image/svg+xml;base64,AAA", { image: true }), false);
    assert.equal(isSafeUrl("data:text/html,<b>", { image: true }), false);
  });
});
