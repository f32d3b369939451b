import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatTree } from "../src/ast.js";
import { parseDelimiterRow, splitTableRow, tryParseTable } from "../src/blocks/tables.js";

const never = () => false;

describe("blocks/tables", () => {
  test("splitTableRow ignores optional outer pipes and trims cells", () => {
    assert.deepEqual(splitTableRow("| a |  b  |"), ["a", "b"]);
    assert.deepEqual(splitTableRow("a | b"), ["a", "b"]);
    assert.deepEqual(splitTableRow("| a | |"), ["a", ""]);
  });

  test("splitTableRow turns escaped pipes into literal pipes and keeps other escapes", () => {
    assert.deepEqual(splitTableRow("| a \\| b | \\* |"), ["a | b", "\\*"]);
  });

  test("parseDelimiterRow maps colons to column alignments", () => {
    assert.deepEqual(parseDelimiterRow("| :-- | :-: | --: | --- |"), ["left", "center", "right", null]);
    assert.deepEqual(parseDelimiterRow("-|-"), [null, null]);
  });

  test("parseDelimiterRow rejects cells that are not dash runs", () => {
    assert.equal(parseDelimiterRow("| -- | x |"), null);
    assert.equal(parseDelimiterRow("| : |"), null);
    assert.equal(parseDelimiterRow("    | - |"), null);
  });

  test("tryParseTable builds header and body rows with per-column alignment", () => {
    const result = tryParseTable(["| a | b |", "|:-|-:|", "| 1 | 2 |", "", "after"], 0, never);
    assert.equal(result.next, 3);
    assert.equal(
      formatTree(result.node),
      '(table align=["left","right"] (table_row header=true (table_cell align="left" header=true raw="a") ' +
      '(table_cell align="right" header=true raw="b")) (table_row header=false (table_cell align="left" ' +
      'header=false raw="1") (table_cell align="right" header=false raw="2")))',
    );
  });

  test("tryParseTable pads short body rows and drops extra cells", () => {
    const { node } = tryParseTable(["a|b", "-|-", "x", "1|2|3"], 0, never);
    const raws = node.children.slice(1).map((row) => row.children.map((c) => c.raw));
    assert.deepEqual(raws, [["x", ""], ["1", "2"]]);
  });

  test("tryParseTable returns null without a pipe in the header or with a column count mismatch", () => {
    assert.equal(tryParseTable(["a", "---"], 0, never), null);
    assert.equal(tryParseTable(["| a |", "| - | - |"], 0, never), null);
    assert.equal(tryParseTable(["| a |"], 0, never), null);
    assert.equal(tryParseTable(["| a |", "text"], 0, never), null);
  });

  test("tryParseTable stops at a line for which the endsTable predicate is true", () => {
    const result = tryParseTable(["a|b", "-|-", "1|2", "> quote", "3|4"], 0, (line) => line.startsWith(">"));
    assert.equal(result.next, 3);
    assert.equal(result.node.children.length, 2);
  });
});
