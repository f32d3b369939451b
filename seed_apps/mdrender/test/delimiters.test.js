import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode, formatTree } from "../src/ast.js";
import { DelimiterList, charKind, delimiterFlags, processEmphasis } from "../src/inlines/delimiters.js";

const text = (value) => createNode("text", { value });
const chars = (list) => {
  const out = [];
  for (let d = list.head; d !== null; d = d.next) out.push(d.char);
  return out;
};

describe("inlines/delimiters", () => {
  test("charKind classifies whitespace, punctuation, symbols and other characters", () => {
    assert.equal(charKind(""), "space");
    assert.equal(charKind("\u00a0"), "space");
    assert.equal(charKind("\n"), "space");
    assert.equal(charKind("."), "punct");
    assert.equal(charKind("\u00bf"), "punct");
    assert.equal(charKind("$"), "punct");
    assert.equal(charKind("a"), "other");
    assert.equal(charKind("7"), "other");
  });

  test("delimiterFlags: a run before a word opens and after a word closes", () => {
    assert.deepEqual(delimiterFlags("*", "", "a"), { canOpen: true, canClose: false });
    assert.deepEqual(delimiterFlags("*", "a", ""), { canOpen: false, canClose: true });
    assert.deepEqual(delimiterFlags("*", " ", " "), { canOpen: false, canClose: false });
  });

  test("delimiterFlags: intraword asterisks both open and close", () => {
    assert.deepEqual(delimiterFlags("*", "a", "b"), { canOpen: true, canClose: true });
  });

  test("delimiterFlags: intraword underscores neither open nor close", () => {
    assert.deepEqual(delimiterFlags("_", "a", "b"), { canOpen: false, canClose: false });
  });

  test("delimiterFlags: punctuation next to the run relaxes underscore rules", () => {
    assert.deepEqual(delimiterFlags("_", "(", "a"), { canOpen: true, canClose: false });
    assert.deepEqual(delimiterFlags("_", ".", "."), { canOpen: true, canClose: true });
    assert.deepEqual(delimiterFlags("*", "a", "("), { canOpen: false, canClose: true });
  });

  test("DelimiterList links records in order and unlinks from any position", () => {
    const list = new DelimiterList();
    const a = list.push({ char: "*", count: 2, canOpen: true, canClose: false, node: text("**") });
    const b = list.push({ char: "_", count: 1, canOpen: true, canClose: true, node: text("_") });
    const c = list.push({ char: "~", count: 2, canOpen: false, canClose: true, node: text("~~") });
    assert.equal(a.origCount, 2);
    assert.deepEqual(chars(list), ["*", "_", "~"]);
    list.remove(b);
    assert.deepEqual(chars(list), ["*", "~"]);
    assert.equal(c.prev, a);
    list.remove(a);
    list.remove(c);
    assert.equal(list.head, null);
    assert.equal(list.tail, null);
  });

  test("processEmphasis wraps the nodes between a matching opener and closer", () => {
    const nodes = [text("x "), text("*"), text("a"), text("*")];
    const list = new DelimiterList();
    list.push({ char: "*", count: 1, canOpen: true, canClose: false, node: nodes[1] });
    list.push({ char: "*", count: 1, canOpen: false, canClose: true, node: nodes[3] });
    processEmphasis(nodes, list, null);
    assert.deepEqual(nodes.map(formatTree), ['(text "x ")', '(emphasis (text "a"))']);
    assert.equal(list.head, null);
  });

  test("processEmphasis prefers strong and leaves unmatched delimiter characters as text", () => {
    const nodes = [text("***"), text("a"), text("**")];
    const list = new DelimiterList();
    list.push({ char: "*", count: 3, canOpen: true, canClose: false, node: nodes[0] });
    list.push({ char: "*", count: 2, canOpen: false, canClose: true, node: nodes[2] });
    processEmphasis(nodes, list, null);
    assert.deepEqual(nodes.map(formatTree), ['(text "*")', '(strong (text "a"))']);
  });

  test("processEmphasis applies the rule of three to runs that can both open and close", () => {
    const nodes = [text("*"), text("a"), text("**"), text("b")];
    const list = new DelimiterList();
    list.push({ char: "*", count: 1, canOpen: true, canClose: false, node: nodes[0] });
    list.push({ char: "*", count: 2, canOpen: true, canClose: true, node: nodes[2] });
    processEmphasis(nodes, list, null);
    assert.deepEqual(nodes.map(formatTree), ['(text "*")', '(text "a")', '(text "**")', '(text "b")']);
  });

  test("processEmphasis pairs tildes only with runs of equal length", () => {
    const nodes = [text("~"), text("a"), text("~~"), text("b"), text("~")];
    const list = new DelimiterList();
    list.push({ char: "~", count: 1, canOpen: true, canClose: false, node: nodes[0] });
    list.push({ char: "~", count: 2, canOpen: false, canClose: true, node: nodes[2] });
    list.push({ char: "~", count: 1, canOpen: false, canClose: true, node: nodes[4] });
    processEmphasis(nodes, list, null);
    assert.deepEqual(nodes.map(formatTree), ['(strikethrough (text "a") (text "~~") (text "b"))']);
  });

  test("processEmphasis leaves delimiters at or below the bottom untouched", () => {
    const nodes = [text("*"), text("a"), text("*"), text("b"), text("*")];
    const list = new DelimiterList();
    const bottom = list.push({ char: "*", count: 1, canOpen: true, canClose: false, node: nodes[0] });
    list.push({ char: "*", count: 1, canOpen: true, canClose: false, node: nodes[2] });
    list.push({ char: "*", count: 1, canOpen: false, canClose: true, node: nodes[4] });
    processEmphasis(nodes, list, bottom);
    assert.deepEqual(nodes.map(formatTree), ['(text "*")', '(text "a")', '(emphasis (text "b"))']);
    assert.equal(list.head, bottom);
    assert.equal(list.tail, bottom);
  });
});
