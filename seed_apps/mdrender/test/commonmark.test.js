import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { render } from "../src/index.js";

// End-to-end examples modelled on CommonMark / GFM behaviour: [name, markdown, expected HTML].
const CASES = {
  emphasis: [
    ["emphasis may end inside a word", "*foo*bar", "<p><em>foo</em>bar</p>\n"],
    ["an underscore run inside a word cannot open emphasis", "_foo_bar", "<p>_foo_bar</p>\n"],
    ["an unbalanced opener leaves its extra delimiter as text", "**foo*", "<p>*<em>foo</em></p>\n"],
    ["an unbalanced closer leaves its extra delimiter as text", "*foo**", "<p><em>foo</em>*</p>\n"],
    ["strong can nest inside emphasis", "*foo**bar**baz*", "<p><em>foo<strong>bar</strong>baz</em></p>\n"],
    ["the rule of three keeps a lone double run literal", "*foo**bar*", "<p><em>foo**bar</em></p>\n"],
    ["emphasis inside quotes inside strong", '**foo "*bar*" foo**', "<p><strong>foo &quot;<em>bar</em>&quot; foo</strong></p>\n"],
    ["a delimiter followed by whitespace cannot open", "a * foo bar*", "<p>a * foo bar*</p>\n"],
    ["emphasis may nest through punctuation", "*(*foo*)*", "<p><em>(<em>foo</em>)</em></p>\n"],
    ["intraword triple asterisks give emphasis around strong", "foo***bar***baz", "<p>foo<em><strong>bar</strong></em>baz</p>\n"],
    ["nested strong inside strong with underscores", "__foo, __bar__, baz__", "<p><strong>foo, <strong>bar</strong>, baz</strong></p>\n"],
    ["inner emphasis closes before outer", "*foo *bar**", "<p><em>foo <em>bar</em></em></p>\n"],
    ["five underscores produce emphasis around two strongs", "_____foo_____", "<p><em><strong><strong>foo</strong></strong></em></p>\n"],
    ["mismatched delimiter kinds do not pair", "*foo _bar* baz_", "<p><em>foo _bar</em> baz_</p>\n"],
    ["an opener without a closer after a later opener stays literal", "*foo *bar baz*", "<p>*foo <em>bar baz</em></p>\n"],
    ["code spans bind tighter than emphasis", "*foo`*`", "<p>*foo<code>*</code></p>\n"],
    ["strikethrough with one or two tildes", "~~Hi~~ Hello, ~there~ world!", "<p><del>Hi</del> Hello, <del>there</del> world!</p>\n"],
  ],
  links: [
    ["link text may contain emphasis, strong and code", "[link *foo **bar** `#`*](/uri)", '<p><a href="/uri">link <em>foo <strong>bar</strong> <code>#</code></em></a></p>\n'],
    ["the inner link wins when links are nested", "[foo [bar](/uri)](/uri)", '<p>[foo <a href="/uri">bar</a>](/uri)</p>\n'],
    ["image alt text flattens nested links", "![foo [bar](/uri)](/uri2)", '<p><img src="/uri2" alt="foo bar" /></p>\n'],
    ["link brackets take precedence over emphasis", "[foo *bar](baz*)", '<p><a href="baz*">foo *bar</a></p>\n'],
    ["pointy destinations may contain spaces", "[link](</my uri>)", '<p><a href="/my%20uri">link</a></p>\n'],
    ["balanced parentheses are allowed in destinations", "[link](foo(and(bar)))", '<p><a href="foo(and(bar))">link</a></p>\n'],
    ["an empty destination is allowed", "[link]()", '<p><a href="">link</a></p>\n'],
    ["a reference title is rendered", '[foo]: /url "title"\n\n[foo]', '<p><a href="/url" title="title">foo</a></p>\n'],
    ["collapsed references match case-insensitively", "[FOO]: /url\n\n[Foo][]", '<p><a href="/url">Foo</a></p>\n'],
    ["the first of duplicate definitions wins", '[foo]\n\n[foo]: /url "title"\n[foo]: /other', '<p><a href="/url" title="title">foo</a></p>\n'],
    ["collapsed image references use the label as alt text", '![foo *bar*][]\n\n[foo *bar*]: train.jpg "train & tracks"', '<p><img src="train.jpg" alt="foo bar" title="train &amp; tracks" /></p>\n'],
    ["a definition whose title is followed by text is not a definition", '[foo]: /url "title" ok', "<p>[foo]: /url &quot;title&quot; ok</p>\n"],
    ["a title may not span a blank line", "[foo]: /url 'title\n\nwith blank line'\n\n[foo]", "<p>[foo]: /url 'title</p>\n<p>with blank line'</p>\n<p>[foo]</p>\n"],
    ["code spans take precedence over link syntax", "[not a `link](/foo`)", "<p>[not a <code>link](/foo</code>)</p>\n"],
    ["autolinks take precedence over emphasis", "**a<http://foo.bar/?q=**>", '<p>**a<a href="http://foo.bar/?q=**">http://foo.bar/?q=**</a></p>\n'],
    ["autolink text and href are escaped", "<http://a.b/?q=1&id=2>", '<p><a href="http://a.b/?q=1&amp;id=2">http://a.b/?q=1&amp;id=2</a></p>\n'],
    ["non-ASCII destinations are percent-encoded", "[a](http://\u4f8b.jp/\u00e4)", '<p><a href="http://%E4%BE%8B.jp/%C3%A4">a</a></p>\n'],
  ],
  blocks: [
    ["a multi-line setext heading", "Foo\nbar\n---", "<h2>Foo\nbar</h2>\n"],
    ["asterisks after a paragraph form a thematic break", "Foo\n***", "<p>Foo</p>\n<hr />\n"],
    ["a closing hash sequence is removed", "# foo #", "<h1>foo</h1>\n"],
    ["a hash without a following space is not a heading", "#5 bolt", "<p>#5 bolt</p>\n"],
    ["an escaped closing hash is kept", "### foo \\###", "<h3>foo ###</h3>\n"],
    ["a thematic break separates two lists", "- foo\n***\n- bar", "<ul>\n<li>foo</li>\n</ul>\n<hr />\n<ul>\n<li>bar</li>\n</ul>\n"],
    ["a blank line anywhere between items makes every item loose", "- a\n- b\n\n- c", "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n<li>\n<p>c</p>\n</li>\n</ul>\n"],
    ["a loose sublist does not loosen its parent", "- a\n  - b\n\n    c\n- d", "<ul>\n<li>a\n<ul>\n<li>\n<p>b</p>\n<p>c</p>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n"],
    ["an ordered list that does not start at 1 cannot interrupt a paragraph", "The number\n14. is", "<p>The number\n14. is</p>\n"],
    ["a list item may contain a fenced code block with blank lines", "- a\n- ```\n  b\n\n\n  ```\n- c", "<ul>\n<li>a</li>\n<li>\n<pre><code>b\n\n\n</code></pre>\n</li>\n<li>c</li>\n</ul>\n"],
    ["a lazy line continues a paragraph in a list item", "- a\nb\n- c", "<ul>\n<li>a\nb</li>\n<li>c</li>\n</ul>\n"],
    ["a quote inside an ordered item accepts lazy lines", "1. a\n   > b\n   c", "<ol>\n<li>a\n<blockquote>\n<p>b\nc</p>\n</blockquote>\n</li>\n</ol>\n"],
    ["content indented five spaces after a bullet starts indented code", "-     code\n\n  para", "<ul>\n<li>\n<pre><code>code\n</code></pre>\n<p>para</p>\n</li>\n</ul>\n"],
    ["a heading and paragraph inside a block quote", "> # Foo\n> bar\n> baz", "<blockquote>\n<h1>Foo</h1>\n<p>bar\nbaz</p>\n</blockquote>\n"],
    ["a dash line after a quote is a thematic break, not lazy text", "> foo\n---", "<blockquote>\n<p>foo</p>\n</blockquote>\n<hr />\n"],
    ["a list in a quote does not continue outside it", "> - foo\n- bar", "<blockquote>\n<ul>\n<li>foo</li>\n</ul>\n</blockquote>\n<ul>\n<li>bar</li>\n</ul>\n"],
    ["a blank line separates two block quotes", "> foo\n\n> bar", "<blockquote>\n<p>foo</p>\n</blockquote>\n<blockquote>\n<p>bar</p>\n</blockquote>\n"],
    ["a closing fence must use the opening character", "```\naaa\n~~~\n```", "<pre><code>aaa\n~~~\n</code></pre>\n"],
    ["fence indentation is removed from content lines", "  ```\n  aaa\naaa\n  ```", "<pre><code>aaa\naaa\n</code></pre>\n"],
    ["HTML block kind 6 ends at a blank line and markdown resumes", "<table><tr><td>\n<pre>\n**Hello**,\n\n_world_.\n</pre>\n</td></tr></table>", "<table><tr><td>\n<pre>\n**Hello**,\n<p><em>world</em>.\n</pre></p>\n</td></tr></table>\n"],
    ["a script block ends at its closing tag", "<script>\nalert(1)\n</script>\nokay", "<script>\nalert(1)\n</script>\n<p>okay</p>\n"],
    ["a block tag interrupts a paragraph", "Foo\n<div>\nbar\n</div>", "<p>Foo</p>\n<div>\nbar\n</div>\n"],
    ["hard breaks from trailing spaces and backslashes", "foo  \nbar\\\nbaz", "<p>foo<br />\nbar<br />\nbaz</p>\n"],
    ["entities decode in text and invalid ones are escaped", "&nbsp; &amp; &copy; &AElig; &Dcaron; &#0;", "<p>\u00a0 &amp; \u00a9 \u00c6 &amp;Dcaron; \ufffd</p>\n"],
  ],
  tables: [
    ["escaped pipes stay inside cells, even in code", "| f\\|oo  |\n| ------ |\n| b `\\|` az |", "<table>\n<thead>\n<tr>\n<th>f|oo</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>b <code>|</code> az</td>\n</tr>\n</tbody>\n</table>\n"],
    ["body rows are padded and truncated to the header width", "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |", "<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td></td>\n</tr>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n</tbody>\n</table>\n"],
    ["a delimiter row with the wrong cell count is not a table", "| a |\n| - | - |", "<p>| a |\n| - | - |</p>\n"],
  ],
};

for (const [group, cases] of Object.entries(CASES)) {
  describe(`commonmark ${group}`, () => {
    for (const [name, markdown, expected] of cases) {
      test(name, () => {
        assert.equal(render(markdown), expected);
      });
    }
  });
}
