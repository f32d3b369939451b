/**
 * HTML renderer: serializes a document tree to HTML in the style of the CommonMark reference
 * implementation (one block per line, `<br />`-style void tags), with a safe mode that omits
 * raw HTML and blanks out dangerous URLs.
 * @module renderer
 */
import { textContent } from "./ast.js";
import { escapeHtml } from "./entities.js";
import { RenderError } from "./errors.js";
import { isSafeUrl, normalizeUri } from "./urls.js";

const RAW_HTML_OMITTED = "<!-- raw HTML omitted -->";

/**
 * Render `key="value"` pairs for an attribute object, in insertion order. Values are
 * escaped; null/undefined/false values are skipped and `true` renders as an empty value.
 * @param {Record<string, string | number | boolean | null | undefined>} [attrs]
 * @returns {string} the attributes, each preceded by a space
 */
export function renderAttributes(attrs) {
  if (attrs === undefined || attrs === null) return "";
  let out = "";
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    out += ` ${key}="${value === true ? "" : escapeHtml(String(value))}"`;
  }
  return out;
}

/**
 * Serializes AST nodes to HTML. Built-in rules exist for every node type in `NODE_TYPES`;
 * `options.rules` can override them or add rules for custom node types.
 */
export class HtmlRenderer {
  /**
   * @param {object} [options]
   * @param {boolean} [options.safe=false] omit raw HTML (replaced by a comment) and render
   *   unsafe link/image URLs as empty attributes
   * @param {string} [options.softBreak="\n"] output for soft line breaks
   * @param {string} [options.langPrefix="language-"] class prefix for fenced code languages
   * @param {Record<string, (node: object, renderer: HtmlRenderer, tight: boolean) => string>}
   *   [options.rules] per-node-type render functions taking precedence over the built-ins
   */
  constructor(options = {}) {
    this.safe = options.safe ?? false;
    this.softBreak = options.softBreak ?? "\n";
    this.langPrefix = options.langPrefix ?? "language-";
    this.rules = options.rules ?? {};
  }

  /**
   * Render a whole tree (normally a document node).
   * @param {object} root
   * @returns {string} HTML
   * @throws {RenderError} for a node type with neither a custom nor a built-in rule
   */
  render(root) {
    return this.renderNode(root, false);
  }

  /**
   * Render one node with the custom rule for its type, or the built-in one.
   * @param {object} node
   * @param {boolean} tight whether the node is a direct child of a tight list item
   * @returns {string}
   * @throws {RenderError} for an unknown node type
   */
  renderNode(node, tight) {
    if (Object.hasOwn(this.rules, node.type)) return this.rules[node.type](node, this, tight);
    const method = BUILTIN_RULES[node.type];
    if (method === undefined) throw new RenderError(node.type);
    return method.call(this, node, tight);
  }

  /**
   * Render and concatenate a list of nodes.
   * @param {object[]} nodes
   * @param {boolean} [tight=false]
   * @returns {string}
   */
  renderChildren(nodes, tight = false) {
    let out = "";
    for (const node of nodes) out += this.renderNode(node, tight);
    return out;
  }

  /**
   * Prepare a destination for an attribute: percent-encode it and escape it for HTML; in safe
   * mode an unsafe URL becomes the empty string.
   * @param {string} url
   * @param {boolean} [image=false] whether the URL is an image source (allows some data: URLs)
   * @returns {string}
   */
  url(url, image = false) {
    if (this.safe && !isSafeUrl(url, { image })) return "";
    return escapeHtml(normalizeUri(url));
  }

  /**
   * Render a list item: in a tight list, paragraphs lose their `<p>` wrapper; other blocks
   * start on a new line. A boolean `checked` property adds a disabled checkbox before the
   * first paragraph's content (or at the start of the item).
   * @param {object} item a list_item node
   * @param {boolean} tight
   * @returns {string}
   */
  renderListItem(item, tight) {
    let checkbox = "";
    if (typeof item.checked === "boolean") {
      checkbox = `<input type="checkbox" disabled=""${item.checked ? " checked=\"\"" : ""} /> `;
    }
    let inner = "";
    item.children.forEach((child, index) => {
      const prefix = index === 0 ? checkbox : "";
      if (child.type === "paragraph" && tight) {
        inner += prefix + this.renderChildren(child.children);
      } else if (child.type === "paragraph") {
        inner += `${inner.endsWith("\n") ? "" : "\n"}<p>${prefix}${this.renderChildren(child.children)}</p>\n`;
      } else {
        inner += `${prefix}${inner.endsWith("\n") ? "" : "\n"}${this.renderNode(child, tight)}`;
      }
    });
    if (item.children.length === 0) inner = checkbox.trimEnd();
    return `<li>${inner}</li>\n`;
  }

  /**
   * Render a table: the header row in `<thead>`, other rows in `<tbody>` (omitted when there
   * are no body rows); cells carry an `align` attribute when their column is aligned.
   * @param {object} table a table node
   * @returns {string}
   */
  renderTable(table) {
    const [header, ...body] = table.children;
    let out = `<table>\n<thead>\n${this.renderNode(header, false)}</thead>\n`;
    if (body.length > 0) out += `<tbody>\n${this.renderChildren(body)}</tbody>\n`;
    return `${out}</table>\n`;
  }
}

/**
 * Built-in render rules, one per node type, called with `this` bound to the renderer as
 * `rule(node, tight)` and returning the node's HTML. Block rules end their output with a
 * newline; inline rules do not.
 */
const BUILTIN_RULES = {
  document(node) { return this.renderChildren(node.children); },
  /** `<p>...</p>`, or the bare inline content inside a tight list item. */
  paragraph(node, tight) {
    const inner = this.renderChildren(node.children);
    return tight ? inner : `<p>${inner}</p>\n`;
  },
  /** `<hN>` with an `id` attribute when the node has a string `id`. */
  heading(node) {
    const id = typeof node.id === "string" ? ` id="${escapeHtml(node.id)}"` : "";
    return `<h${node.level}${id}>${this.renderChildren(node.children)}</h${node.level}>\n`;
  },
  thematic_break() { return "<hr />\n"; },
  /** `<pre><code>` with escaped content; the info string's first word becomes a language class. */
  code_block(node) {
    const lang = node.info.split(/\s+/)[0];
    const cls = lang === "" ? "" : ` class="${escapeHtml(this.langPrefix + lang)}"`;
    return `<pre><code${cls}>${escapeHtml(node.value)}</code></pre>\n`;
  },
  blockquote(node) { return `<blockquote>\n${this.renderChildren(node.children)}</blockquote>\n`; },
  /** `<ul>` or `<ol>` (with `start` unless it is 1); items render tight or loose per `node.tight`. */
  list(node) {
    const tag = node.ordered ? "ol" : "ul";
    const start = node.ordered && node.start !== 1 ? ` start="${node.start}"` : "";
    return `<${tag}${start}>\n${this.renderChildren(node.children, node.tight)}</${tag}>\n`;
  },
  list_item(node, tight) { return this.renderListItem(node, tight); },
  html_block(node) { return `${this.safe ? RAW_HTML_OMITTED : node.value}\n`; },
  table(node) { return this.renderTable(node); },
  table_row(node) { return `<tr>\n${this.renderChildren(node.children)}</tr>\n`; },
  /** `<th>` in header rows, `<td>` otherwise, with `align` when the column is aligned. */
  table_cell(node) {
    const tag = node.header ? "th" : "td";
    const align = node.align ? ` align="${node.align}"` : "";
    return `<${tag}${align}>${this.renderChildren(node.children)}</${tag}>\n`;
  },
  text(node) { return escapeHtml(node.value); },
  softbreak() { return this.softBreak; },
  hardbreak() { return "<br />\n"; },
  emphasis(node) { return `<em>${this.renderChildren(node.children)}</em>`; },
  strong(node) { return `<strong>${this.renderChildren(node.children)}</strong>`; },
  strikethrough(node) { return `<del>${this.renderChildren(node.children)}</del>`; },
  code(node) { return `<code>${escapeHtml(node.value)}</code>`; },
  /** `<a>` with the encoded (and in safe mode, vetted) href, optional title and extra `attrs`. */
  link(node) {
    const title = node.title === null || node.title === undefined ? "" : ` title="${escapeHtml(node.title)}"`;
    return `<a href="${this.url(node.href)}"${title}${renderAttributes(node.attrs)}>${this.renderChildren(node.children)}</a>`;
  },
  /** `<img>` whose alt text is the plain text of the description. */
  image(node) {
    const title = node.title === null || node.title === undefined ? "" : ` title="${escapeHtml(node.title)}"`;
    return `<img src="${this.url(node.src, true)}" alt="${escapeHtml(textContent(node))}"${title} />`;
  },
  html_inline(node) { return this.safe ? RAW_HTML_OMITTED : node.value; },
};
