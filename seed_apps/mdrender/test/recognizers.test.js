import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  interruptsParagraph, isFenceClose, isThematicBreak, matchAtxHeading, matchBlockQuoteMarker,
  matchFenceOpen, matchListMarker, matchSetextUnderline,
} from "../src/blocks/recognizers.js";

describe("blocks/recognizers", () => {
  test("matchAtxHeading reads level and trimmed content", () => {
    assert.deepEqual(matchAtxHeading("###   Title  "), { level: 3, content: "Title" });
    assert.deepEqual(matchAtxHeading("#"), { level: 1, content: "" });
  });

  test("matchAtxHeading strips a closing sequence only when preceded by whitespace", () => {
    assert.deepEqual(matchAtxHeading("## foo ##   "), { level: 2, content: "foo" });
    assert.deepEqual(matchAtxHeading("# foo#"), { level: 1, content: "foo#" });
    assert.deepEqual(matchAtxHeading("### ###"), { level: 3, content: "" });
    assert.deepEqual(matchAtxHeading("# foo \\#"), { level: 1, content: "foo \\#" });
  });

  test("matchAtxHeading rejects seven hashes, a missing space and deep indentation", () => {
    assert.equal(matchAtxHeading("####### x"), null);
    assert.equal(matchAtxHeading("#hashtag"), null);
    assert.equal(matchAtxHeading("    # x"), null);
  });

  test("matchSetextUnderline returns 1 for = lines and 2 for - lines", () => {
    assert.equal(matchSetextUnderline("==="), 1);
    assert.equal(matchSetextUnderline("   -  "), 2);
    assert.equal(matchSetextUnderline("= ="), 0);
    assert.equal(matchSetextUnderline("--- x"), 0);
  });

  test("isThematicBreak accepts spaced runs of three or more identical characters", () => {
    assert.equal(isThematicBreak("***"), true);
    assert.equal(isThematicBreak(" - - -"), true);
    assert.equal(isThematicBreak("_____"), true);
    assert.equal(isThematicBreak("**"), false);
    assert.equal(isThematicBreak("*-*"), false);
    assert.equal(isThematicBreak("    ***"), false);
  });

  test("matchFenceOpen reads fence character, length, indentation and info string", () => {
    assert.deepEqual(matchFenceOpen("  ````js  extra "), { indent: 2, char: "`", length: 4, info: "js  extra" });
    assert.deepEqual(matchFenceOpen("~~~ a`b"), { indent: 0, char: "~", length: 3, info: "a`b" });
    assert.equal(matchFenceOpen("~~~ c&amp;\\*").info, "c&*");
  });

  test("matchFenceOpen rejects short runs and backtick fences whose info has a backtick", () => {
    assert.equal(matchFenceOpen("``"), null);
    assert.equal(matchFenceOpen("``` a`b"), null);
  });

  test("isFenceClose needs the same character, at least the opening length and no info", () => {
    const fence = { char: "`", length: 4 };
    assert.equal(isFenceClose("`````  ", fence), true);
    assert.equal(isFenceClose("```", fence), false);
    assert.equal(isFenceClose("~~~~", fence), false);
    assert.equal(isFenceClose("```` x", fence), false);
  });

  test("matchBlockQuoteMarker strips the marker and one following space", () => {
    assert.equal(matchBlockQuoteMarker("   >  text"), " text");
    assert.equal(matchBlockQuoteMarker(">text"), "text");
    assert.equal(matchBlockQuoteMarker(">\tcode"), "  code");
    assert.equal(matchBlockQuoteMarker("    > no"), null);
  });

  test("matchListMarker reads bullet markers and the content column", () => {
    assert.deepEqual(matchListMarker("  -   item"), {
      ordered: false, marker: "-", start: null, indent: 2, contentIndent: 6, content: "item", blankStart: false,
    });
  });

  test("matchListMarker reads ordered markers with either delimiter", () => {
    const m = matchListMarker("12) x");
    assert.equal(m.ordered, true);
    assert.equal(m.marker, ")");
    assert.equal(m.start, 12);
    assert.equal(m.contentIndent, 4);
    assert.equal(matchListMarker("1234567890. x"), null);
  });

  test("matchListMarker needs whitespace after the marker", () => {
    assert.equal(matchListMarker("-x"), null);
    assert.equal(matchListMarker("1.x"), null);
  });

  test("matchListMarker handles empty items and items starting with indented code", () => {
    const empty = matchListMarker("* ");
    assert.equal(empty.blankStart, true);
    assert.equal(empty.contentIndent, 2);
    const code = matchListMarker("-      code");
    assert.equal(code.contentIndent, 2);
    assert.equal(code.content, "     code");
  });

  test("interruptsParagraph is true for headings, fences, breaks, quotes and bullet items", () => {
    for (const line of ["# h", "```", "***", "> q", "- item", "1. one", "<div>"]) {
      assert.equal(interruptsParagraph(line), true, line);
    }
  });

  test("interruptsParagraph is false for ordered items not starting at 1, empty items, kind-7 HTML and indented lines", () => {
    for (const line of ["2. two", "-", "<span>", "    # h", "plain"]) {
      assert.equal(interruptsParagraph(line), false, line);
    }
  });
});
