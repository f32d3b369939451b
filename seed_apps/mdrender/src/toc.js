/**
 * Table of contents: collects the headings of a parsed document, nests them by level and
 * renders the result as an HTML list or as a markdown list.
 * @module toc
 */
import { textContent, walk } from "./ast.js";
import { escapeHtml } from "./entities.js";

/**
 * Collect the headings whose level lies in `[minLevel, maxLevel]`, in document order.
 * @param {object} ast a document node (heading ids, if any, are taken from `node.id`)
 * @param {{minLevel?: number, maxLevel?: number}} [options] default 1 and 6
 * @returns {Array<{level: number, text: string, id: string | null}>}
 */
export function collectHeadings(ast, options = {}) {
  const minLevel = options.minLevel ?? 1;
  const maxLevel = options.maxLevel ?? 6;
  const headings = [];
  walk(ast, (node) => {
    if (node.type === "heading" && node.level >= minLevel && node.level <= maxLevel) {
      headings.push({ level: node.level, text: textContent(node), id: typeof node.id === "string" ? node.id : null });
    }
  });
  return headings;
}

/**
 * Nest a flat heading list into a tree: each heading becomes a child of the closest preceding
 * heading with a smaller level; headings with no such predecessor are roots. Skipped levels
 * (an h1 followed directly by an h3) therefore nest one step, not two.
 * @param {Array<{level: number, text: string, id: string | null}>} headings
 * @returns {Array<{level: number, text: string, id: string | null, children: object[]}>}
 */
export function buildTocTree(headings) {
  const root = { level: 0, children: [] };
  const stack = [root];
  for (const heading of headings) {
    const entry = { ...heading, children: [] };
    while (stack[stack.length - 1].level >= heading.level) stack.pop();
    stack[stack.length - 1].children.push(entry);
    stack.push(entry);
  }
  return root.children;
}

/**
 * Render a TOC tree as nested `<ul>` lists. Entries with an id link to `#id`; others show
 * plain text. An empty tree renders as the empty string.
 * @param {ReturnType<typeof buildTocTree>} tree
 * @returns {string}
 */
export function renderTocHtml(tree) {
  if (tree.length === 0) return "";
  let out = "<ul>\n";
  for (const entry of tree) {
    const label = escapeHtml(entry.text);
    out += entry.id === null ? `<li>${label}` : `<li><a href="#${escapeHtml(entry.id)}">${label}</a>`;
    out += entry.children.length > 0 ? `\n${renderTocHtml(entry.children)}</li>\n` : "</li>\n";
  }
  return `${out}</ul>\n`;
}

/**
 * Render a TOC tree as a markdown bullet list (`- [Text](#id)`), indenting each nesting level
 * by `indent` spaces. Brackets and backslashes in heading text are backslash-escaped; entries
 * without an id are plain text.
 * @param {ReturnType<typeof buildTocTree>} tree
 * @param {{indent?: number}} [options] default indent 2
 * @returns {string} one line per entry, each ending with a newline
 */
export function renderTocMarkdown(tree, options = {}) {
  const indent = options.indent ?? 2;
  const lines = [];
  const visit = (entries, depth) => {
    for (const entry of entries) {
      const text = entry.text.replace(/[\\[\]]/g, "\\$&");
      const item = entry.id === null ? text : `[${text}](#${entry.id})`;
      lines.push(`${" ".repeat(depth * indent)}- ${item}`);
      visit(entry.children, depth + 1);
    }
  };
  visit(tree, 0);
  return lines.map((line) => `${line}\n`).join("");
}
