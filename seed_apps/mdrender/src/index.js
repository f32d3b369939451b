/**
 * Public API of mdrender: parse markdown to an AST, render markdown (or an AST) to HTML,
 * and build a table of contents. Re-exports the building blocks for advanced use.
 *
 * Pipeline: source preparation -> plugin preprocess -> block parsing -> inline parsing ->
 * plugin transforms -> heading ids -> HTML rendering -> plugin postprocess.
 * @module index
 */
import { SKIP, walk } from "./ast.js";
import { BlockParser } from "./blocks/blockParser.js";
import { InlineParser } from "./inlines/inlineParser.js";
import { OptionsError } from "./errors.js";
import { normalizeOptions } from "./options.js";
import { PluginPipeline } from "./plugins.js";
import { HtmlRenderer } from "./renderer.js";
import { assignHeadingIds } from "./slugger.js";
import { assertMarkdownString, prepareSource } from "./source.js";
import { buildTocTree, collectHeadings, renderTocHtml, renderTocMarkdown } from "./toc.js";

export {
  AstError, InputError, MarkdownError, NestingError, OptionsError, PluginError, RenderError,
} from "./errors.js";
export { REMOVE, SKIP, cloneNode, createNode, findAll, formatTree, textContent, walk } from "./ast.js";
export {
  definePlugin, externalLinksPlugin, headingOffsetPlugin, stripNodesPlugin, tableWrapperPlugin,
  taskListPlugin, typographerPlugin,
} from "./plugins.js";
export { HtmlRenderer } from "./renderer.js";
export { slugify } from "./slugger.js";

/**
 * Replace the `raw` text of paragraphs, headings and table cells with parsed inline nodes.
 * @param {object} ast document node (mutated)
 * @param {InlineParser} inlineParser
 * @returns {object} the same document node
 */
export function parseInlineContent(ast, inlineParser) {
  walk(ast, (node) => {
    if (typeof node.raw !== "string") return undefined;
    node.children = inlineParser.parse(node.raw);
    delete node.raw;
    return SKIP;
  });
  return ast;
}

/** Parse with already-normalized options and a ready plugin pipeline (see {@link parse}). */
function parseWith(markdown, opts, pipeline) {
  assertMarkdownString(markdown);
  const lines = prepareSource(pipeline.preprocess(markdown), { tabSize: opts.tabSize });
  const refs = new Map();
  const doc = new BlockParser({ refs, maxNesting: opts.maxNesting, tables: opts.tables }).parse(lines);
  parseInlineContent(doc, new InlineParser({ refs, strikethrough: opts.strikethrough }));
  const ast = pipeline.transform(doc, { options: opts, refs });
  if (opts.headingIds) assignHeadingIds(ast, { prefix: opts.headingIdPrefix });
  return ast;
}

/**
 * Parse markdown into a document tree, running plugin `preprocess` and `transform` hooks and,
 * when `options.headingIds` is set, assigning heading ids.
 * @param {string} markdown
 * @param {object} [options] see `DEFAULT_OPTIONS` in the options module
 * @returns {object} the document node
 * @throws {InputError} when `markdown` is not a string
 * @throws {OptionsError} for invalid options
 * @throws {NestingError} when containers nest deeper than `options.maxNesting`
 * @throws {PluginError} for invalid plugins or hook results
 */
export function parse(markdown, options = {}) {
  const opts = normalizeOptions(options);
  return parseWith(markdown, opts, new PluginPipeline(opts.plugins));
}

/**
 * Render a document tree (for example one returned by {@link parse} and then modified) to
 * HTML, using renderer rules from `options.plugins` and running their `postprocess` hooks.
 * @param {object} ast
 * @param {object} [options]
 * @returns {string}
 * @throws {OptionsError} for invalid options
 * @throws {RenderError} for a node type without a render rule
 */
export function renderAst(ast, options = {}) {
  const opts = normalizeOptions(options);
  const pipeline = new PluginPipeline(opts.plugins);
  const renderer = new HtmlRenderer({
    safe: opts.safe, softBreak: opts.softBreak, langPrefix: opts.langPrefix, rules: pipeline.rules(),
  });
  return pipeline.postprocess(renderer.render(ast));
}

/**
 * Render markdown to HTML.
 * @param {string} markdown
 * @param {object} [options] see `DEFAULT_OPTIONS` in the options module
 * @returns {string} HTML
 * @throws {InputError | OptionsError | NestingError | PluginError | RenderError}
 */
export function render(markdown, options = {}) {
  return renderAst(parse(markdown, options), options);
}

/**
 * Build the table of contents of a markdown document. Heading ids are always generated (with
 * `options.headingIdPrefix`) so that entries match the ids `render(..., {headingIds: true})`
 * produces.
 * @param {string} markdown
 * @param {object} [options] parse options plus `minLevel`/`maxLevel` (default 1/6) and
 *   `format`: "html" (default), "markdown" or "tree"
 * @returns {string | object[]} HTML, markdown text, or the nested tree
 * @throws {OptionsError} for an unknown `format` or invalid parse options
 */
export function tableOfContents(markdown, options = {}) {
  const { minLevel, maxLevel, format = "html", ...parseOptions } = options;
  if (!["html", "markdown", "tree"].includes(format)) {
    throw new OptionsError("format", "must be \"html\", \"markdown\" or \"tree\"");
  }
  const ast = parse(markdown, { ...parseOptions, headingIds: true });
  const tree = buildTocTree(collectHeadings(ast, { minLevel, maxLevel }));
  if (format === "tree") return tree;
  return format === "markdown" ? renderTocMarkdown(tree) : renderTocHtml(tree);
}
