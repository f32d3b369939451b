import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createNode, formatTree } from "../src/ast.js";
import { PluginError } from "../src/errors.js";
import { parse, render } from "../src/index.js";
import {
  PluginPipeline, definePlugin, externalLinksPlugin, headingOffsetPlugin, smartenText, stripNodesPlugin,
  tableWrapperPlugin, taskListPlugin, typographerPlugin,
} from "../src/plugins.js";

describe("plugins", () => {
  test("definePlugin returns a frozen copy of a valid definition", () => {
    const spec = { name: "p", postprocess: (h) => h };
    const plugin = definePlugin(spec);
    assert.notEqual(plugin, spec);
    assert.equal(Object.isFrozen(plugin), true);
    assert.equal(plugin.name, "p");
  });

  test("definePlugin rejects non-objects and missing names", () => {
    assert.throws(() => definePlugin(null), (e) => e instanceof PluginError && e.plugin === "<anonymous>");
    assert.throws(() => definePlugin([]), PluginError);
    assert.throws(() => definePlugin({ name: "" }), /non-empty string name/);
  });

  test("definePlugin rejects unknown keys, non-function hooks and non-function rules", () => {
    assert.throws(() => definePlugin({ name: "p", render: () => "" }), /unknown hook "render"/);
    assert.throws(() => definePlugin({ name: "p", transform: "x" }), /hook "transform" must be a function/);
    assert.throws(() => definePlugin({ name: "p", rules: { text: 1 } }), /rule for "text" must be a function/);
  });

  test("PluginPipeline keeps plugin order and rejects duplicate names", () => {
    assert.deepEqual(new PluginPipeline([{ name: "a" }, { name: "b" }]).names, ["a", "b"]);
    assert.throws(() => new PluginPipeline([{ name: "a" }, { name: "a" }]), (e) => e instanceof PluginError && /registered twice/.test(e.message));
  });

  test("preprocess and postprocess hooks run in order and must return strings", () => {
    const pipeline = new PluginPipeline([
      { name: "a", preprocess: (s) => `${s}1`, postprocess: (s) => `${s}x` },
      { name: "b", preprocess: (s) => `${s}2`, postprocess: (s) => `${s}y` },
    ]);
    assert.equal(pipeline.preprocess("s"), "s12");
    assert.equal(pipeline.postprocess("h"), "hxy");
    assert.throws(() => new PluginPipeline([{ name: "bad", preprocess: () => 1 }]).preprocess(""), /preprocess must return a string/);
    assert.throws(() => new PluginPipeline([{ name: "bad", postprocess: () => null }]).postprocess(""), /postprocess must return a string/);
  });

  test("transform hooks may mutate in place or return a replacement document", () => {
    const replacement = createNode("document", { children: [createNode("thematic_break")] });
    const seen = [];
    const pipeline = new PluginPipeline([
      { name: "mutate", transform: (ast, ctx) => { ast.children.push(createNode("thematic_break")); seen.push(ctx.tag); } },
      { name: "replace", transform: (ast) => (ast.children.length === 1 ? replacement : undefined) },
      { name: "check", transform: (ast) => { seen.push(ast === replacement); } },
    ]);
    const result = pipeline.transform(createNode("document"), { tag: "ctx" });
    assert.equal(result, replacement);
    assert.deepEqual(seen, ["ctx", true]);
  });

  test("a transform returning something other than a document raises PluginError", () => {
    const pipeline = new PluginPipeline([{ name: "bad", transform: () => createNode("paragraph") }]);
    assert.throws(() => pipeline.transform(createNode("document")), /transform must return undefined or a document node/);
  });

  test("rules from later plugins override earlier ones for the same node type", () => {
    const first = () => "1";
    const second = () => "2";
    const other = () => "o";
    const rules = new PluginPipeline([{ name: "a", rules: { text: first, code: other } }, { name: "b", rules: { text: second } }]).rules();
    assert.deepEqual(rules, { text: second, code: other });
  });

  test("headingOffsetPlugin shifts heading levels and clamps them to 1..6", () => {
    assert.equal(render("# a\n##### b", { plugins: [headingOffsetPlugin(2)] }), "<h3>a</h3>\n<h6>b</h6>\n");
    assert.equal(render("## a", { plugins: [headingOffsetPlugin(-5)] }), "<h1>a</h1>\n");
    assert.throws(() => headingOffsetPlugin(1.5), PluginError);
  });

  test("taskListPlugin marks checked and unchecked items and strips the marker", () => {
    const ast = parse("- [ ] todo\n- [x] done\n- [X]\n- plain [ ] x", { plugins: [taskListPlugin()] });
    const items = ast.children[0].children;
    assert.deepEqual(items.map((i) => i.checked), [false, true, undefined, undefined]);
    assert.equal(formatTree(items[0]), '(list_item checked=false (paragraph (text "todo")))');
  });

  test("taskListPlugin drops a paragraph's first text node when only the marker was in it", () => {
    const ast = parse("- [x] *done*", { plugins: [taskListPlugin()] });
    assert.equal(formatTree(ast.children[0].children[0]), '(list_item checked=true (paragraph (emphasis (text "done"))))');
  });

  test("externalLinksPlugin adds target and rel to off-site http links only", () => {
    const html = render("[a](https://ext.com/x) [b](http://Docs.Local/y) [c](/rel) [d](mailto:x@y.z)", {
      plugins: [externalLinksPlugin({ internalHosts: ["docs.local"] })],
    });
    assert.equal(html, '<p><a href="https://ext.com/x" target="_blank" rel="noopener noreferrer">a</a> ' +
      '<a href="http://Docs.Local/y">b</a> <a href="/rel">c</a> <a href="mailto:x@y.z">d</a></p>\n');
  });

  test("externalLinksPlugin accepts a custom target", () => {
    assert.equal(render("<http://x.io>", { plugins: [externalLinksPlugin({ target: "ext" })] }),
      '<p><a href="http://x.io" target="ext" rel="noopener noreferrer">http://x.io</a></p>\n');
  });

  test("stripNodesPlugin removes all nodes of the listed types", () => {
    assert.equal(render("![i](x.png) text\n\n<div>raw</div>\n\n# h", { plugins: [stripNodesPlugin(["image", "html_block"])] }),
      "<p> text</p>\n<h1>h</h1>\n");
    assert.throws(() => stripNodesPlugin("image"), PluginError);
  });

  test("smartenText replaces dashes and ellipses", () => {
    assert.equal(smartenText("a -- b --- c..."), "a \u2013 b \u2014 c\u2026");
  });

  test("smartenText curls double quotes by context", () => {
    assert.equal(smartenText('"Hi," she said ("ok")'), "\u201cHi,\u201d she said (\u201cok\u201d)");
    assert.equal(smartenText('a"', "x"), "a\u201d");
    assert.equal(smartenText('"b', " "), "\u201cb");
  });

  test("smartenText distinguishes apostrophes from single quotes", () => {
    assert.equal(smartenText("don't 'quote' '90s"), "don\u2019t \u2018quote\u2019 \u201890s");
  });

  test("typographerPlugin looks across inline nodes but leaves code untouched", () => {
    assert.equal(render('"*a*" -- `"x"` it\'s', { plugins: [typographerPlugin()] }),
      "<p>\u201c<em>a</em>\u201d \u2013 <code>&quot;x&quot;</code> it\u2019s</p>\n");
  });

  test("typographerPlugin treats a line break as whitespace for the next quote", () => {
    assert.equal(render('a\n"b"', { plugins: [typographerPlugin()] }), "<p>a\n\u201cb\u201d</p>\n");
  });

  test("tableWrapperPlugin wraps tables in a div with an escaped class", () => {
    assert.equal(render("a|b\n-|-", { plugins: [tableWrapperPlugin("t\"w")] }),
      '<div class="t&quot;w">\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n</table>\n</div>\n');
    assert.equal(render("a|b\n-|-", { plugins: [tableWrapperPlugin()] }).startsWith('<div class="table-wrapper">'), true);
  });
});
