import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode } from "../src/ast.js";
import { RenderError } from "../src/errors.js";
import { HtmlRenderer, renderAttributes } from "../src/renderer.js";

const text = (value) => createNode("text", { value });
const para = (...children) => createNode("paragraph", { children });
const doc = (...children) => createNode("document", { children });
const html = (node, options) => new HtmlRenderer(options).render(node);

describe("renderer", () => {
  test("renderAttributes escapes values, renders true as empty and skips null/false", () => {
    assert.equal(renderAttributes({ a: "x\"y", b: true, c: null, d: false, e: 3 }), ' a="x&quot;y" b="" e="3"');
    assert.equal(renderAttributes(undefined), "");
  });

  test("paragraphs, headings and thematic breaks render one per line", () => {
    const tree = doc(createNode("heading", { level: 2, children: [text("H")] }), para(text("a < b")), createNode("thematic_break"));
    assert.equal(html(tree), "<h2>H</h2>\n<p>a &lt; b</p>\n<hr />\n");
  });

  test("headings with an id get an escaped id attribute", () => {
    assert.equal(html(createNode("heading", { level: 1, id: "a\"b", children: [text("x")] })), '<h1 id="a&quot;b">x</h1>\n');
  });

  test("code blocks escape content and add a language class from the first info word", () => {
    const code = createNode("code_block", { value: "<x>\n", info: "js title=a", fenced: true });
    assert.equal(html(code), '<pre><code class="language-js">&lt;x&gt;\n</code></pre>\n');
    assert.equal(html(code, { langPrefix: "lang-" }), '<pre><code class="lang-js">&lt;x&gt;\n</code></pre>\n');
    assert.equal(html(createNode("code_block", { value: "", info: "", fenced: true })), "<pre><code></code></pre>\n");
  });

  test("ordered lists emit a start attribute only when the start is not 1", () => {
    const item = createNode("list_item", { children: [para(text("x"))] });
    assert.equal(html(createNode("list", { ordered: true, start: 3, tight: true, children: [item] })), '<ol start="3">\n<li>x</li>\n</ol>\n');
    assert.equal(html(createNode("list", { ordered: true, start: 1, tight: true, children: [item] })), "<ol>\n<li>x</li>\n</ol>\n");
  });

  test("tight list items drop paragraph tags and put nested blocks on new lines", () => {
    const nested = createNode("list", { ordered: false, start: null, tight: true, children: [createNode("list_item", { children: [para(text("b"))] })] });
    const item = createNode("list_item", { children: [para(text("a")), nested, para(text("c"))] });
    assert.equal(new HtmlRenderer().renderListItem(item, true), "<li>a\n<ul>\n<li>b</li>\n</ul>\nc</li>\n");
  });

  test("loose list items keep paragraph tags and empty items render empty", () => {
    const item = createNode("list_item", { children: [para(text("a")), para(text("b"))] });
    assert.equal(new HtmlRenderer().renderListItem(item, false), "<li>\n<p>a</p>\n<p>b</p>\n</li>\n");
    assert.equal(new HtmlRenderer().renderListItem(createNode("list_item"), true), "<li></li>\n");
  });

  test("task list items render a disabled checkbox before the first paragraph", () => {
    const r = new HtmlRenderer();
    const done = createNode("list_item", { checked: true, children: [para(text("a"))] });
    const open = createNode("list_item", { checked: false, children: [para(text("b"))] });
    assert.equal(r.renderListItem(done, true), '<li><input type="checkbox" disabled="" checked="" /> a</li>\n');
    assert.equal(r.renderListItem(open, false), '<li>\n<p><input type="checkbox" disabled="" /> b</p>\n</li>\n');
    assert.equal(r.renderListItem(createNode("list_item", { checked: false }), true), '<li><input type="checkbox" disabled="" /></li>\n');
  });

  test("block quotes wrap their children", () => {
    assert.equal(html(createNode("blockquote", { children: [para(text("q"))] })), "<blockquote>\n<p>q</p>\n</blockquote>\n");
  });

  test("tables render thead, tbody and cell alignment, omitting an empty tbody", () => {
    const cell = (header, align, value) => createNode("table_cell", { header, align, children: [text(value)] });
    const head = createNode("table_row", { header: true, children: [cell(true, "center", "h")] });
    const body = createNode("table_row", { header: false, children: [cell(false, "center", "d")] });
    assert.equal(html(createNode("table", { align: ["center"], children: [head, body] })),
      '<table>\n<thead>\n<tr>\n<th align="center">h</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align="center">d</td>\n</tr>\n</tbody>\n</table>\n');
    assert.equal(html(createNode("table", { align: [null], children: [createNode("table_row", { header: true, children: [cell(true, null, "h")] })] })),
      "<table>\n<thead>\n<tr>\n<th>h</th>\n</tr>\n</thead>\n</table>\n");
  });

  test("inline containers map to em, strong and del, code is escaped", () => {
    const p = para(createNode("emphasis", { children: [text("a")] }), createNode("strong", { children: [text("b")] }),
      createNode("strikethrough", { children: [text("c")] }), createNode("code", { value: "<d>" }));
    assert.equal(html(p), "<p><em>a</em><strong>b</strong><del>c</del><code>&lt;d&gt;</code></p>\n");
  });

  test("soft breaks use the softBreak option and hard breaks emit br", () => {
    const p = para(text("a"), createNode("softbreak"), text("b"), createNode("hardbreak"), text("c"));
    assert.equal(html(p), "<p>a\nb<br />\nc</p>\n");
    assert.equal(html(p, { softBreak: "<br />\n" }), "<p>a<br />\nb<br />\nc</p>\n");
  });

  test("links encode the destination, escape the title and append extra attributes", () => {
    const link = createNode("link", { href: "/a b?x=1&y", title: 'say "hi"', attrs: { rel: "nofollow" }, children: [text("t")] });
    assert.equal(html(link), '<a href="/a%20b?x=1&amp;y" title="say &quot;hi&quot;" rel="nofollow">t</a>');
  });

  test("images take their alt text from the description's plain text", () => {
    const img = createNode("image", { src: "i.png", title: null, children: [text("a "), createNode("emphasis", { children: [text("b")] })] });
    assert.equal(html(img), '<img src="i.png" alt="a b" />');
  });

  test("raw HTML passes through by default and is omitted in safe mode", () => {
    const tree = doc(createNode("html_block", { value: "<div>" }), para(createNode("html_inline", { value: "<b>" })));
    assert.equal(html(tree), "<div>\n<p><b></p>\n");
    assert.equal(html(tree, { safe: true }), "<!-- raw HTML omitted -->\n<p><!-- raw HTML omitted --></p>\n");
  });

  test("safe mode blanks unsafe link and image URLs but keeps safe ones", () => {
    const r = new HtmlRenderer({ safe: true });
    assert.equal(r.url("javascript:alert(1)"), "");
    assert.equal(r.url("https://ok"), "https://ok");
    assert.equal(r.url("data:image/gif;base64,R0", true), "data:image/gif;base64,R0");
    assert.equal(r.url("data:image/gif;base64,R0"), "");
    assert.equal(new HtmlRenderer().url("javascript:x"), "javascript:x");
  });

  test("custom rules override built-in rules and receive the renderer", () => {
    const r = new HtmlRenderer({ rules: { emphasis: (node, renderer) => `<i>${renderer.renderChildren(node.children)}</i>` } });
    assert.equal(r.render(para(createNode("emphasis", { children: [text("x")] }))), "<p><i>x</i></p>\n");
  });

  test("rendering an unknown node type raises RenderError naming the type", () => {
    assert.throws(() => html(doc({ type: "widget" })), (err) => err instanceof RenderError && err.nodeType === "widget");
  });
});
