import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode } from "../src/ast.js";
import { buildTocTree, collectHeadings, renderTocHtml, renderTocMarkdown } from "../src/toc.js";

const h = (level, value, id) => createNode("heading", { level, id, children: [createNode("text", { value })] });
const makeDoc = () => createNode("document", {
  children: [
    h(1, "Title", "title"),
    createNode("blockquote", { children: [h(2, "Quoted", "quoted")] }),
    h(3, "Deep", undefined),
    h(2, "Next", "next"),
  ],
});

describe("toc", () => {
  test("collectHeadings finds headings anywhere in the tree with their ids", () => {
    assert.deepEqual(collectHeadings(makeDoc()), [
      { level: 1, text: "Title", id: "title" },
      { level: 2, text: "Quoted", id: "quoted" },
      { level: 3, text: "Deep", id: null },
      { level: 2, text: "Next", id: "next" },
    ]);
  });

  test("collectHeadings filters by minimum and maximum level", () => {
    assert.deepEqual(collectHeadings(makeDoc(), { minLevel: 2, maxLevel: 2 }).map((x) => x.text), ["Quoted", "Next"]);
  });

  test("buildTocTree nests each heading under the closest preceding shallower heading", () => {
    const tree = buildTocTree([
      { level: 2, text: "a", id: "a" }, { level: 3, text: "b", id: "b" }, { level: 2, text: "c", id: "c" },
    ]);
    assert.deepEqual(tree, [
      { level: 2, text: "a", id: "a", children: [{ level: 3, text: "b", id: "b", children: [] }] },
      { level: 2, text: "c", id: "c", children: [] },
    ]);
  });

  test("buildTocTree nests a skipped level one step and starts new roots for shallower headings", () => {
    const tree = buildTocTree([
      { level: 3, text: "x", id: null }, { level: 1, text: "y", id: null }, { level: 4, text: "z", id: null },
    ]);
    assert.deepEqual(tree.map((e) => [e.text, e.children.map((c) => c.text)]), [["x", []], ["y", ["z"]]]);
  });

  test("renderTocHtml renders nested lists with fragment links", () => {
    const tree = buildTocTree(collectHeadings(makeDoc()));
    assert.equal(renderTocHtml(tree),
      '<ul>\n<li><a href="#title">Title</a>\n<ul>\n<li><a href="#quoted">Quoted</a>\n<ul>\n<li>Deep</li>\n</ul>\n</li>\n' +
      '<li><a href="#next">Next</a></li>\n</ul>\n</li>\n</ul>\n');
  });

  test("renderTocHtml escapes text and returns an empty string for an empty tree", () => {
    assert.equal(renderTocHtml([{ level: 1, text: "a<b", id: "a&b", children: [] }]), '<ul>\n<li><a href="#a&amp;b">a&lt;b</a></li>\n</ul>\n');
    assert.equal(renderTocHtml([]), "");
  });

  test("renderTocMarkdown indents nested entries and escapes brackets", () => {
    const tree = buildTocTree([{ level: 1, text: "A [x]", id: "a-x" }, { level: 2, text: "B", id: null }]);
    assert.equal(renderTocMarkdown(tree), "- [A \\[x\\]](#a-x)\n  - B\n");
    assert.equal(renderTocMarkdown(tree, { indent: 4 }), "- [A \\[x\\]](#a-x)\n    - B\n");
  });
});
