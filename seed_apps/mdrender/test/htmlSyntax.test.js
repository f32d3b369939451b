import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { BLOCK_TAG_NAMES, htmlBlockEnds, matchHtmlBlockStart, matchInlineHtml } from "../src/htmlSyntax.js";

describe("htmlSyntax", () => {
  test("matchHtmlBlockStart recognizes raw-text, comment, instruction, declaration and CDATA starts", () => {
    assert.equal(matchHtmlBlockStart("<script type=x>"), 1);
    assert.equal(matchHtmlBlockStart("  <PRE>"), 1);
    assert.equal(matchHtmlBlockStart("<!-- note"), 2);
    assert.equal(matchHtmlBlockStart("<?php"), 3);
    assert.equal(matchHtmlBlockStart("<!DOCTYPE html>"), 4);
    assert.equal(matchHtmlBlockStart("<![CDATA[x"), 5);
  });

  test("matchHtmlBlockStart gives kind 6 for known block tags, open or closing", () => {
    assert.equal(matchHtmlBlockStart("<div class=\"a\">"), 6);
    assert.equal(matchHtmlBlockStart("</Table>"), 6);
    assert.equal(matchHtmlBlockStart("<hr/>"), 6);
    assert.equal(BLOCK_TAG_NAMES.has("section"), true);
  });

  test("matchHtmlBlockStart gives kind 7 only for a complete tag alone on its line", () => {
    assert.equal(matchHtmlBlockStart("<custom-el a='1'>  "), 7);
    assert.equal(matchHtmlBlockStart("</span>"), 7);
    assert.equal(matchHtmlBlockStart("<span>text"), 0);
  });

  test("matchHtmlBlockStart rejects four-space indentation and non-tags", () => {
    assert.equal(matchHtmlBlockStart("    <div>"), 0);
    assert.equal(matchHtmlBlockStart("< div>"), 0);
    assert.equal(matchHtmlBlockStart("a <div>"), 0);
  });

  test("htmlBlockEnds checks the terminator of each kind and never ends kinds 6 and 7", () => {
    assert.equal(htmlBlockEnds("x</style>", 1), true);
    assert.equal(htmlBlockEnds("</div>", 1), false);
    assert.equal(htmlBlockEnds("a -->", 2), true);
    assert.equal(htmlBlockEnds("?>", 3), true);
    assert.equal(htmlBlockEnds("x>", 4), true);
    assert.equal(htmlBlockEnds("]]>", 5), true);
    assert.equal(htmlBlockEnds("</div>", 6), false);
    assert.equal(htmlBlockEnds("", 7), false);
  });

  test("matchInlineHtml measures open tags with attributes and closing tags", () => {
    assert.equal(matchInlineHtml('x <a href="u" data-x=\'1\' hidden>', 2), 30);
    assert.equal(matchInlineHtml("</em >", 0), 6);
    assert.equal(matchInlineHtml("<br/>", 0), 5);
  });

  test("matchInlineHtml measures comments, instructions, declarations and CDATA", () => {
    assert.equal(matchInlineHtml("<!-- a\nb -->x", 0), 12);
    assert.equal(matchInlineHtml("<?x y?>", 0), 7);
    assert.equal(matchInlineHtml("<!ELEMENT br EMPTY>", 0), 19);
    assert.equal(matchInlineHtml("<![CDATA[a]]>", 0), 13);
  });

  test("matchInlineHtml returns 0 for malformed constructs", () => {
    assert.equal(matchInlineHtml("<a href=\"x>", 0), 0);
    assert.equal(matchInlineHtml("<3", 0), 0);
    assert.equal(matchInlineHtml("<!-->", 0), 0);
  });
});
