import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatTree } from "../src/ast.js";
import { BlockParser } from "../src/blocks/blockParser.js";
import { matchListMarker } from "../src/blocks/recognizers.js";
import { NestingError } from "../src/errors.js";
import { prepareSource } from "../src/source.js";

const tree = (markdown, options) => formatTree(new BlockParser(options).parse(prepareSource(markdown)));

describe("blocks/blockParser", () => {
  test("consecutive lines form one paragraph with leading whitespace removed", () => {
    assert.equal(tree("a\n   b  \nc  "), '(document (paragraph raw="a\\nb  \\nc"))');
  });

  test("an ATX heading interrupts a paragraph", () => {
    assert.equal(tree("text\n## Head #\nmore"), '(document (paragraph raw="text") (heading level=2 raw="Head") (paragraph raw="more"))');
  });

  test("an underline turns the preceding paragraph lines into a setext heading", () => {
    assert.equal(tree("Foo\nbar\n===\n\nBaz\n---"), '(document (heading level=1 raw="Foo\\nbar") (heading level=2 raw="Baz"))');
  });

  test("a dash line after a blank line is a thematic break, not an underline", () => {
    assert.equal(tree("Foo\n\n---"), '(document (paragraph raw="Foo") (thematic_break))');
  });

  test("a paragraph of only reference definitions produces no node but records the definitions", () => {
    const parser = new BlockParser();
    const doc = parser.parse(prepareSource("[a]: /x 'T'\n===\n\ntext"));
    assert.equal(formatTree(doc), '(document (paragraph raw="===") (paragraph raw="text"))');
    assert.deepEqual([...parser.refs], [["A", { destination: "/x", title: "T" }]]);
  });

  test("indented code keeps inner blank lines and drops trailing ones", () => {
    assert.equal(tree("    a\n\n      b\n\n\nc"), '(document (code_block "a\\n\\n  b\\n" fenced=false info="") (paragraph raw="c"))');
  });

  test("indented lines cannot interrupt a paragraph", () => {
    assert.equal(tree("para\n    not code"), '(document (paragraph raw="para\\nnot code"))');
  });

  test("fenced code removes the fence indentation and keeps the info string", () => {
    assert.equal(tree("  ~~~ py  x\n  a\n b\n    c\n  ~~~~\nafter"),
      '(document (code_block "a\\nb\\n  c\\n" fenced=true info="py  x") (paragraph raw="after"))');
  });

  test("an unclosed fence runs to the end of its container", () => {
    assert.equal(tree("> ```\n> code\n\nout"), '(document (blockquote (code_block "code\\n" fenced=true info="")) (paragraph raw="out"))');
    assert.equal(tree("```"), '(document (code_block "" fenced=true info=""))');
  });

  test("HTML blocks of kinds 1-5 run to their end marker and kinds 6-7 to a blank line", () => {
    assert.equal(tree("<!-- a\nb -->\ntext"), '(document (html_block "<!-- a\\nb -->") (paragraph raw="text"))');
    assert.equal(tree("<div>\n*x*\n\ntext"), '(document (html_block "<div>\\n*x*") (paragraph raw="text"))');
  });

  test("a kind 7 HTML tag cannot interrupt a paragraph", () => {
    assert.equal(tree("a\n<span>\nb"), '(document (paragraph raw="a\\n<span>\\nb"))');
  });

  test("block quotes collect marked lines and lazy paragraph continuations", () => {
    assert.equal(tree("> a\nb\n> c\n\nd"), '(document (blockquote (paragraph raw="a\\nb\\nc")) (paragraph raw="d"))');
  });

  test("a line without a quote marker does not continue a non-paragraph block", () => {
    assert.equal(tree("> # h\nb"), '(document (blockquote (heading level=1 raw="h")) (paragraph raw="b"))');
    assert.equal(tree(">     code\n    more"),
      '(document (blockquote (code_block "code\\n" fenced=false info="")) (code_block "more\\n" fenced=false info=""))');
  });

  test("nested block quotes accept lazy lines at the innermost paragraph", () => {
    assert.equal(tree("> > a\nb"), '(document (blockquote (blockquote (paragraph raw="a\\nb"))))');
  });

  test("a list without blank lines is tight", () => {
    assert.equal(tree("- a\n- b"),
      '(document (list marker="-" ordered=false start=null tight=true (list_item (paragraph raw="a")) (list_item (paragraph raw="b"))))');
  });

  test("a blank line between items makes the list loose", () => {
    assert.equal(tree("1. a\n\n2. b").includes("tight=false"), true);
  });

  test("a blank line between two blocks of one item makes the list loose", () => {
    assert.equal(tree("- a\n\n  b\n- c"),
      '(document (list marker="-" ordered=false start=null tight=false (list_item (paragraph raw="a") (paragraph raw="b")) (list_item (paragraph raw="c"))))');
  });

  test("blank lines inside a nested list or a code block keep the outer list tight", () => {
    assert.equal(tree("- a\n  - b\n\n  - c\n- d").startsWith('(document (list marker="-" ordered=false start=null tight=true'), true);
    assert.equal(tree("- ```\n  x\n\n  y\n  ```\n- z").includes("tight=true"), true);
  });

  test("trailing blank lines after the last item do not make the list loose", () => {
    assert.equal(tree("- a\n- b\n\n\npara"),
      '(document (list marker="-" ordered=false start=null tight=true (list_item (paragraph raw="a")) (list_item (paragraph raw="b"))) (paragraph raw="para"))');
  });

  test("changing the bullet character or ordered delimiter starts a new list", () => {
    assert.equal(tree("- a\n+ b\n1. c\n1) d").match(/\(list /g).length, 4);
  });

  test("ordered lists record their start number", () => {
    assert.equal(tree("7. a\n8. b").includes("ordered=true start=7"), true);
  });

  test("items nest by content indentation and under-indented markers are siblings", () => {
    assert.equal(tree("- a\n  - b\n - c"),
      '(document (list marker="-" ordered=false start=null tight=true (list_item (paragraph raw="a") ' +
      '(list marker="-" ordered=false start=null tight=true (list_item (paragraph raw="b")))) (list_item (paragraph raw="c"))))');
  });

  test("an item starting with a blank line ends at a second blank line", () => {
    assert.equal(tree("-\n  foo\n-\n\n  bar"),
      '(document (list marker="-" ordered=false start=null tight=true (list_item (paragraph raw="foo")) (list_item)) (paragraph raw="bar"))');
  });

  test("a thematic break ends a list", () => {
    assert.equal(tree("* a\n* * *"), '(document (list marker="*" ordered=false start=null tight=true (list_item (paragraph raw="a"))) (thematic_break))');
  });

  test("GFM tables are recognized unless the tables option is off", () => {
    assert.equal(tree("a|b\n-|-").startsWith("(document (table "), true);
    assert.equal(tree("a|b\n-|-", { tables: false }), '(document (paragraph raw="a|b\\n-|-"))');
  });

  test("parseBlocks reports whether blank lines separated its blocks", () => {
    const parser = new BlockParser();
    assert.equal(parser.parseBlocks(["a", "", "b"], 0).blankBetween, true);
    assert.equal(parser.parseBlocks(["", "a", "# b", ""], 0).blankBetween, false);
  });

  test("nesting deeper than maxNesting raises NestingError", () => {
    assert.throws(() => tree("> > > x", { maxNesting: 2 }), (err) => err instanceof NestingError && err.limit === 2);
    assert.equal(tree("> > x", { maxNesting: 2 }), '(document (blockquote (blockquote (paragraph raw="x"))))');
  });

  test("isLazyContinuation accepts paragraph text and rejects block starts and blank context", () => {
    const parser = new BlockParser();
    assert.equal(parser.isLazyContinuation(["para"], "more", 0), true);
    assert.equal(parser.isLazyContinuation(["para"], "- item", 0), false);
    assert.equal(parser.isLazyContinuation(["para"], "===", 0), false);
    assert.equal(parser.isLazyContinuation(["para", ""], "more", 0), false);
    assert.equal(parser.isLazyContinuation(["```", "code"], "more", 0), false);
    assert.equal(parser.isLazyContinuation(["- item"], "more", 0), true);
  });

  test("collectListItem strips the content indentation and leaves trailing blank lines", () => {
    const lines = ["- a", "  b", "lazy", "", "   c", "", "", "x"];
    const item = new BlockParser().collectListItem(lines, 0, matchListMarker(lines[0]), 0);
    assert.deepEqual(item, { lines: ["a", "b", "lazy", "", " c"], next: 5 });
  });

  test("parseList stops before blank lines that are not followed by another item", () => {
    const { node, next } = new BlockParser().parseList(["1. a", "", "", "text"], 0, 0);
    assert.equal(next, 1);
    assert.equal(node.tight, true);
  });
});
