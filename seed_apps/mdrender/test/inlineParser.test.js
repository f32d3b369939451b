import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode, formatTree } from "../src/ast.js";
import { InlineParser, mergeTextNodes, normalizeCodeSpan } from "../src/inlines/inlineParser.js";

const refs = new Map([
  ["FOO", { destination: "/foo", title: "Foo T" }],
  ["BAR BAZ", { destination: "/bb", title: null }],
]);
const inline = (text, options = {}) => new InlineParser({ refs, ...options }).parse(text).map(formatTree).join(" ");

describe("inlines/inlineParser", () => {
  test("plain text becomes a single text node", () => {
    assert.equal(inline("hello world"), '(text "hello world")');
  });

  test("normalizeCodeSpan turns newlines into spaces and strips one padding space", () => {
    assert.equal(normalizeCodeSpan(" a\nb "), "a b");
    assert.equal(normalizeCodeSpan("  ``  "), " `` ");
    assert.equal(normalizeCodeSpan("   "), "   ");
    assert.equal(normalizeCodeSpan(" a"), " a");
  });

  test("code spans need a closing run of the same length", () => {
    assert.equal(inline("`` a`b ``"), '(code "a`b")');
    assert.equal(inline("```a``"), '(text "```a``")');
    assert.equal(inline("`a``b`"), '(code "a``b")');
  });

  test("code span content is literal: no escapes or emphasis inside", () => {
    assert.equal(inline("`*a*\\`"), '(code "*a*\\\\")');
  });

  test("backslash escapes make punctuation literal and keep other backslashes", () => {
    assert.equal(inline("\\*a\\* \\q \\"), '(text "*a* \\\\q \\\\")');
  });

  test("a backslash at the end of a line is a hard break", () => {
    assert.equal(inline("a\\\n  b"), '(text "a") (hardbreak) (text "b")');
  });

  test("two trailing spaces make a hard break, fewer make a soft break", () => {
    assert.equal(inline("a  \nb"), '(text "a") (hardbreak) (text "b")');
    assert.equal(inline("a \n   b"), '(text "a") (softbreak) (text "b")');
  });

  test("entities decode to text and unknown ones stay literal", () => {
    assert.equal(inline("&copy; &x; &#x26;"), '(text "\u00a9 &x; &")');
  });

  test("asterisks and underscores produce emphasis and strong emphasis", () => {
    assert.equal(inline("*a* _b_ **c** __d__"),
      '(emphasis (text "a")) (text " ") (emphasis (text "b")) (text " ") (strong (text "c")) (text " ") (strong (text "d"))');
  });

  test("triple delimiters nest strong inside emphasis", () => {
    assert.equal(inline("***a***"), '(emphasis (strong (text "a")))');
  });

  test("intraword underscores stay literal while intraword asterisks emphasize", () => {
    assert.equal(inline("snake_case_name a*b*c"), '(text "snake_case_name a") (emphasis (text "b")) (text "c")');
  });

  test("double tildes produce strikethrough unless disabled", () => {
    assert.equal(inline("~~x~~"), '(strikethrough (text "x"))');
    assert.equal(inline("~~x~~", { strikethrough: false }), '(text "~~x~~")');
    assert.equal(inline("~~~x~~~"), '(text "~~~x~~~")');
  });

  test("inline links carry destination and title and parse their text", () => {
    assert.equal(inline('[a *b*](/u "t")'), '(link href="/u" title="t" (text "a ") (emphasis (text "b")))');
  });

  test("full, collapsed and shortcut reference links resolve case-insensitively", () => {
    assert.equal(inline("[x][foo]"), '(link href="/foo" title="Foo T" (text "x"))');
    assert.equal(inline("[Foo][]"), '(link href="/foo" title="Foo T" (text "Foo"))');
    assert.equal(inline("[bar  baz]"), '(link href="/bb" title=null (text "bar  baz"))');
  });

  test("an unknown full reference is not a link", () => {
    assert.equal(inline("[x][nope]"), '(text "[x][nope]")');
  });

  test("images use the same syntax with a leading bang", () => {
    assert.equal(inline("![alt *x*](/i.png)"), '(image src="/i.png" title=null (text "alt ") (emphasis (text "x")))');
    assert.equal(inline("![foo]"), '(image src="/foo" title="Foo T" (text "foo"))');
  });

  test("a bang not followed by a bracket is text", () => {
    assert.equal(inline("wow! [x]"), '(text "wow! [x]")');
  });

  test("links cannot contain links but images can contain links", () => {
    assert.equal(inline("[a [b](/in)](/out)"), '(text "[a ") (link href="/in" title=null (text "b")) (text "](/out)")');
    assert.equal(inline("![a [b](/in)](/out)"),
      '(image src="/out" title=null (text "a ") (link href="/in" title=null (text "b")))');
  });

  test("emphasis cannot span across a link boundary", () => {
    assert.equal(inline("*[a*](/u)"), '(text "*") (link href="/u" title=null (text "a*"))');
  });

  test("code spans take precedence over link brackets", () => {
    assert.equal(inline("[a `](/u)`"), '(text "[a ") (code "](/u)")');
  });

  test("URI and email autolinks become links with their text", () => {
    assert.equal(inline("<https://x.y/z?a=1>"), '(link autolink=true href="https://x.y/z?a=1" title=null (text "https://x.y/z?a=1"))');
    assert.equal(inline("<me@ex.org>"), '(link autolink=true href="mailto:me@ex.org" title=null (text "me@ex.org"))');
  });

  test("raw inline HTML is kept as html_inline and a lone < is text", () => {
    assert.equal(inline("a <b class='c'>x</b> < d"),
      '(text "a ") (html_inline "<b class=\'c\'>") (text "x") (html_inline "</b>") (text " < d")');
  });

  test("mergeTextNodes joins adjacent text, drops empty text and recurses into containers", () => {
    const nodes = [
      createNode("text", { value: "a" }), createNode("text", { value: "" }), createNode("text", { value: "b" }),
      createNode("emphasis", { children: [createNode("text", { value: "c" }), createNode("text", { value: "d" })] }),
    ];
    assert.deepEqual(mergeTextNodes(nodes).map(formatTree), ['(text "ab")', '(emphasis (text "cd"))']);
    assert.equal(nodes[0].value, "a");
  });
});
