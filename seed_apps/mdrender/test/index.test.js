import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  AstError, InputError, MarkdownError, NestingError, OptionsError, PluginError, RenderError, createNode, formatTree,
  parse, parseInlineContent, render, renderAst, tableOfContents, taskListPlugin, walk,
} from "../src/index.js";
import { BlockParser } from "../src/blocks/blockParser.js";
import { InlineParser } from "../src/inlines/inlineParser.js";

const DOC = `# Guide

Intro with *emphasis*, a [link][home] and \`code\`.

## Install

1. Download
2. Run \`setup\`

## Install

> Note: see <https://example.com>.

[home]: https://example.com/home "Home"
`;

describe("index (public API)", () => {
  test("render converts a complete document", () => {
    assert.equal(render(DOC),
      "<h1>Guide</h1>\n" +
      '<p>Intro with <em>emphasis</em>, a <a href="https://example.com/home" title="Home">link</a> and <code>code</code>.</p>\n' +
      "<h2>Install</h2>\n<ol>\n<li>Download</li>\n<li>Run <code>setup</code></li>\n</ol>\n<h2>Install</h2>\n" +
      '<blockquote>\n<p>Note: see <a href="https://example.com">https://example.com</a>.</p>\n</blockquote>\n');
  });

  test("render with headingIds gives headings unique prefixed ids", () => {
    const html = render(DOC, { headingIds: true, headingIdPrefix: "g-" });
    assert.deepEqual([...html.matchAll(/id="([^"]+)"/g)].map((m) => m[1]), ["g-guide", "g-install", "g-install-1"]);
  });

  test("render of an empty document is the empty string", () => {
    assert.equal(render(""), "");
    assert.equal(render("\n\n  \n"), "");
  });

  test("reference definitions may appear after their use and inside containers", () => {
    assert.equal(render("[a] and [b]\n\n> [a]: /from-quote\n\n- [b]: /from-list"),
      '<p><a href="/from-quote">a</a> and <a href="/from-list">b</a></p>\n<blockquote>\n</blockquote>\n<ul>\n<li></li>\n</ul>\n');
  });

  test("safe mode removes raw HTML and dangerous URLs end to end", () => {
    const md = "<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=y> ![i](data:image/png;base64,AA)";
    assert.equal(render(md, { safe: true }),
      "<!-- raw HTML omitted -->\n" +
      '<p><a href="">x</a> <!-- raw HTML omitted --> <img src="data:image/png;base64,AA" alt="i" /></p>\n');
  });

  test("parse returns the AST with inline content parsed and no raw properties", () => {
    assert.equal(formatTree(parse("# *Hi*\n\n| a |\n|---|\n| `b` |")),
      '(document (heading level=1 (emphasis (text "Hi"))) (table align=[null] (table_row header=true ' +
      '(table_cell align=null header=true (text "a"))) (table_row header=false (table_cell align=null header=false (code "b")))))');
  });

  test("parse applies plugin preprocess and transform hooks before returning", () => {
    const shout = { name: "shout", preprocess: (s) => s.toUpperCase() };
    const ast = parse("- [ ] task", { plugins: [shout, taskListPlugin()] });
    assert.equal(formatTree(ast), '(document (list marker="-" ordered=false start=null tight=true (list_item checked=false (paragraph (text "TASK")))))');
  });

  test("transform hooks receive the options and the reference map", () => {
    let context;
    parse("[r]: /x", { safe: true, plugins: [{ name: "spy", transform: (_ast, ctx) => { context = ctx; } }] });
    assert.equal(context.options.safe, true);
    assert.deepEqual([...context.refs], [["R", { destination: "/x", title: null }]]);
  });

  test("renderAst renders a modified tree with plugin rules and postprocessing", () => {
    const ast = parse("hello *world*");
    walk(ast, (node) => { if (node.type === "emphasis") node.type = "strong"; });
    const plugin = { name: "p", rules: { strong: (n, r) => `<b>${r.renderChildren(n.children)}</b>` }, postprocess: (h) => h.trim() };
    assert.equal(renderAst(ast, { plugins: [plugin] }), "<p>hello <b>world</b></p>");
  });

  test("parseInlineContent replaces raw text on every inline container", () => {
    const refs = new Map();
    const doc = new BlockParser({ refs }).parse(["# *a*", "", "b|c", "-|-", "", "[x]: /y", "[x]"]);
    const result = parseInlineContent(doc, new InlineParser({ refs }));
    assert.equal(result, doc);
    assert.equal(formatTree(doc).includes("raw="), false);
    assert.equal(formatTree(doc.children[2]), '(paragraph (link href="/y" title=null (text "x")))');
  });

  test("tableOfContents renders HTML by default using the same ids as render", () => {
    assert.equal(tableOfContents(DOC),
      '<ul>\n<li><a href="#guide">Guide</a>\n<ul>\n<li><a href="#install">Install</a></li>\n<li><a href="#install-1">Install</a></li>\n</ul>\n</li>\n</ul>\n');
  });

  test("tableOfContents supports markdown and tree formats with level limits", () => {
    assert.equal(tableOfContents(DOC, { format: "markdown", minLevel: 2 }), "- [Install](#install)\n- [Install](#install-1)\n");
    assert.deepEqual(tableOfContents("# A\n### B", { format: "tree", headingIdPrefix: "p-" }),
      [{ level: 1, text: "A", id: "p-a", children: [{ level: 3, text: "B", id: "p-b", children: [] }] }]);
  });

  test("tableOfContents rejects an unknown format", () => {
    assert.throws(() => tableOfContents("# a", { format: "pdf" }), (e) => e instanceof OptionsError && e.option === "format");
  });

  test("invalid input and options raise the documented errors", () => {
    assert.throws(() => render(undefined), InputError);
    assert.throws(() => parse(Buffer.from("x")), /got object/);
    assert.throws(() => render("x", { colour: true }), OptionsError);
    assert.throws(() => render(">".repeat(5) + " x", { maxNesting: 3 }), NestingError);
    assert.throws(() => render("x", { plugins: [{ name: "p", bogus: 1 }] }), PluginError);
    assert.throws(() => renderAst(createNode("document", { children: [{ type: "mystery" }] })), RenderError);
  });

  test("every library error derives from MarkdownError and carries its class name", () => {
    for (const ErrorClass of [AstError, InputError, NestingError, OptionsError, PluginError, RenderError]) {
      assert.equal(ErrorClass.prototype instanceof MarkdownError, true, ErrorClass.name);
    }
    const err = new NestingError(3);
    assert.equal(err.name, "NestingError");
    assert.equal(err instanceof Error, true);
  });

  test("disabling tables and strikethrough renders their syntax literally", () => {
    assert.equal(render("a|b\n-|-\n\n~~x~~", { tables: false, strikethrough: false }), "<p>a|b\n-|-</p>\n<p>~~x~~</p>\n");
  });

  test("the tabSize option controls indentation from tabs", () => {
    assert.equal(render("\tcode", { tabSize: 4 }), "<pre><code>code\n</code></pre>\n");
    assert.equal(render("\tnot code", { tabSize: 2 }), "<p>not code</p>\n");
  });
});
