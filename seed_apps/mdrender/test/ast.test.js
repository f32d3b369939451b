import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { NODE_TYPES, REMOVE, SKIP, cloneNode, createNode, findAll, formatTree, textContent, walk } from "../src/ast.js";
import { AstError } from "../src/errors.js";

const text = (value) => createNode("text", { value });
const sample = () => createNode("document", {
  children: [
    createNode("heading", { level: 1, children: [text("Title")] }),
    createNode("paragraph", {
      children: [text("a "), createNode("emphasis", { children: [text("b")] }), text(" c")],
    }),
  ],
});

describe("ast", () => {
  test("createNode gives container nodes an empty children array", () => {
    assert.deepEqual(createNode("paragraph"), { type: "paragraph", children: [] });
    assert.deepEqual(createNode("text", { value: "x" }), { type: "text", value: "x" });
  });

  test("createNode creates every known type, with children exactly for container types", () => {
    for (const [type, schema] of Object.entries(NODE_TYPES)) {
      assert.equal(Array.isArray(createNode(type).children), schema.container, type);
    }
  });

  test("createNode rejects unknown types and children on leaf nodes", () => {
    assert.throws(() => createNode("widget"), AstError);
    assert.throws(() => createNode("code", { value: "x", children: [] }), /cannot have children/);
  });

  test("walk visits nodes in pre-order on enter and post-order on leave", () => {
    const entered = [];
    const left = [];
    walk(sample(), {
      enter: (node) => { entered.push(node.type); },
      leave: (node) => { left.push(node.type); },
    });
    assert.deepEqual(entered, ["document", "heading", "text", "paragraph", "text", "emphasis", "text", "text"]);
    assert.deepEqual(left, ["text", "heading", "text", "text", "emphasis", "text", "paragraph", "document"]);
  });

  test("walk passes the parent and index to the callback", () => {
    const seen = [];
    walk(sample(), (node, parent, index) => {
      if (node.type === "text") seen.push(`${parent.type}:${index}:${node.value}`);
    });
    assert.deepEqual(seen, ["heading:0:Title", "paragraph:0:a ", "emphasis:0:b", "paragraph:2: c"]);
  });

  test("walk does not descend into a node when enter returns SKIP but still calls leave", () => {
    const entered = [];
    const left = [];
    walk(sample(), {
      enter: (node) => {
        entered.push(node.type);
        return node.type === "paragraph" ? SKIP : undefined;
      },
      leave: (node) => { left.push(node.type); },
    });
    assert.deepEqual(entered, ["document", "heading", "text", "paragraph"]);
    assert.deepEqual(left, ["text", "heading", "paragraph", "document"]);
  });

  test("walk removes nodes for REMOVE without skipping the following sibling", () => {
    const doc = createNode("paragraph", { children: [text("a"), text("b"), text("c")] });
    const visited = [];
    walk(doc, (node) => {
      if (node.type !== "text") return undefined;
      visited.push(node.value);
      return node.value !== "c" ? REMOVE : undefined;
    });
    assert.deepEqual(visited, ["a", "b", "c"]);
    assert.deepEqual(doc.children, [text("c")]);
  });

  test("walk replaces a node with a returned node and does not visit the replacement", () => {
    const doc = sample();
    const visited = [];
    walk(doc, (node) => {
      visited.push(node.type);
      if (node.type === "emphasis") return createNode("strong", { children: [text("B")] });
      return undefined;
    });
    assert.equal(formatTree(doc.children[1]), '(paragraph (text "a ") (strong (text "B")) (text " c"))');
    assert.equal(visited.filter((t) => t === "strong").length, 0);
  });

  test("walk can replace from leave and returns null when the root is removed", () => {
    const doc = createNode("paragraph", { children: [text("a")] });
    walk(doc, { leave: (node) => (node.type === "text" ? createNode("softbreak") : undefined) });
    assert.deepEqual(doc.children, [{ type: "softbreak" }]);
    assert.equal(walk(text("x"), () => REMOVE), null);
    assert.deepEqual(walk(text("x"), () => text("y")), text("y"));
  });

  test("findAll returns matching nodes in document order", () => {
    const values = findAll(sample(), (n) => n.type === "text").map((n) => n.value);
    assert.deepEqual(values, ["Title", "a ", "b", " c"]);
  });

  test("textContent joins text and code, turns breaks into spaces and ignores raw HTML", () => {
    const para = createNode("paragraph", {
      children: [
        text("a"), createNode("softbreak"), createNode("code", { value: "b" }), createNode("hardbreak"),
        createNode("html_inline", { value: "<i>" }),
        createNode("image", { src: "x", title: null, children: [text("alt")] }),
      ],
    });
    assert.equal(textContent(para), "a b alt");
    assert.equal(textContent(createNode("thematic_break")), "");
  });

  test("cloneNode produces a deep copy that shares no mutable state", () => {
    const table = createNode("table", { align: ["left"], children: [createNode("table_row", { header: true })] });
    const link = createNode("link", { href: "u", title: null, attrs: { rel: "x" }, children: [text("t")] });
    const tableCopy = cloneNode(table);
    const linkCopy = cloneNode(link);
    assert.deepEqual(tableCopy, table);
    tableCopy.align.push("right");
    tableCopy.children.push(createNode("table_row"));
    linkCopy.attrs.rel = "y";
    linkCopy.children[0].value = "changed";
    assert.deepEqual(table.align, ["left"]);
    assert.equal(table.children.length, 1);
    assert.equal(link.attrs.rel, "x");
    assert.equal(link.children[0].value, "t");
  });

  test("formatTree prints value first and other properties sorted by key", () => {
    const node = createNode("list", {
      ordered: true, start: 3, tight: false, marker: ".", extra: undefined,
      children: [createNode("list_item", { children: [createNode("code_block", { value: "x\n", info: "js", fenced: true })] })],
    });
    assert.equal(
      formatTree(node),
      '(list marker="." ordered=true start=3 tight=false (list_item (code_block "x\\n" fenced=true info="js")))',
    );
  });
});
