/**
 * The abstract syntax tree shared by the parsers, the renderer, the TOC builder and plugins.
 * Nodes are plain objects `{type, ...props}`; container nodes also carry a `children` array.
 * This module defines the node types, construction with validation, a tree walker that can
 * skip, remove and replace nodes, and a few queries.
 * @module ast
 */
import { AstError } from "./errors.js";

/**
 * Known node types, block-level types first, then inline types. `container` marks the
 * types whose nodes carry a `children` array.
 * @type {Readonly<Record<string, {container: boolean}>>}
 */
export const NODE_TYPES = Object.freeze({
  document: { container: true },
  heading: { container: true },
  paragraph: { container: true },
  thematic_break: { container: false },
  code_block: { container: false },
  blockquote: { container: true },
  list: { container: true },
  list_item: { container: true },
  html_block: { container: false },
  table: { container: true },
  table_row: { container: true },
  table_cell: { container: true },
  text: { container: false },
  softbreak: { container: false },
  hardbreak: { container: false },
  emphasis: { container: true },
  strong: { container: true },
  strikethrough: { container: true },
  code: { container: false },
  link: { container: true },
  image: { container: true },
  html_inline: { container: false },
});

/** Returned from a walker callback: do not descend into this node's children. */
export const SKIP = Symbol("skip");
/** Returned from a walker callback: remove this node from its parent. */
export const REMOVE = Symbol("remove");

/** Schema entry of a node type; throws AstError for unknown types. */
function schemaOf(type) {
  if (!Object.hasOwn(NODE_TYPES, type)) throw new AstError(`unknown node type "${type}"`);
  return NODE_TYPES[type];
}

/**
 * Create a node of a known type. Container nodes get an empty `children` array unless one
 * is supplied in `props`.
 * @param {string} type one of the keys of {@link NODE_TYPES}
 * @param {object} [props] extra properties copied onto the node
 * @returns {object} the new node
 * @throws {AstError} for an unknown type, or when `children` is given for a leaf type
 */
export function createNode(type, props = {}) {
  const schema = schemaOf(type);
  if (!schema.container && props.children !== undefined) {
    throw new AstError(`node type "${type}" cannot have children`);
  }
  const node = { type, ...props };
  if (schema.container && node.children === undefined) node.children = [];
  return node;
}

/**
 * Depth-first walk over a tree. `visitor` is either a function (called on entering each node)
 * or an object with optional `enter` and `leave` functions, each called as
 * `(node, parent, index)` (`parent` is null for the root).
 *
 * A callback may return {@link SKIP} (enter only: do not visit the children),
 * {@link REMOVE} (remove the node from its parent), or a node object, which replaces the
 * current node in its parent; a replacement is not visited further. Any other return value
 * is ignored. Children are visited in order, and removals/replacements during the walk are
 * handled so that no sibling is skipped or visited twice.
 * @param {object} root the tree to walk
 * @param {Function | {enter?: Function, leave?: Function}} visitor
 * @returns {object | null} the root, its replacement, or null if the root was removed
 */
export function walk(root, visitor) {
  const enter = typeof visitor === "function" ? visitor : visitor.enter;
  const leave = typeof visitor === "function" ? undefined : visitor.leave;

  function visit(node, parent, index) {
    if (enter !== undefined) {
      const result = enter(node, parent, index);
      if (result === REMOVE || (result !== null && typeof result === "object")) return result;
      if (result === SKIP) return leave === undefined ? undefined : leave(node, parent, index);
    }
    if (Array.isArray(node.children)) {
      let i = 0;
      while (i < node.children.length) {
        const outcome = visit(node.children[i], node, i);
        if (outcome === REMOVE) {
          node.children.splice(i, 1);
        } else {
          if (outcome !== null && typeof outcome === "object") node.children[i] = outcome;
          i += 1;
        }
      }
    }
    return leave === undefined ? undefined : leave(node, parent, index);
  }

  const outcome = visit(root, null, 0);
  if (outcome === REMOVE) return null;
  return outcome !== null && typeof outcome === "object" ? outcome : root;
}

/**
 * All nodes of the tree (root included) for which `predicate` returns true, in document
 * (pre-)order.
 * @param {object} root
 * @param {(node: object) => boolean} predicate
 * @returns {object[]}
 */
export function findAll(root, predicate) {
  const found = [];
  walk(root, (node) => {
    if (predicate(node)) found.push(node);
  });
  return found;
}

/**
 * Plain text of a subtree: the values of `text` and `code` nodes concatenated, with soft and
 * hard breaks contributing a single space. Raw HTML contributes nothing; an image contributes
 * the text of its description.
 * @param {object} node
 * @returns {string}
 */
export function textContent(node) {
  switch (node.type) {
    case "text":
    case "code":
      return node.value;
    case "softbreak":
    case "hardbreak":
      return " ";
    case "html_inline":
    case "html_block":
      return "";
    default:
      return Array.isArray(node.children) ? node.children.map(textContent).join("") : "";
  }
}

/**
 * Deep copy of a subtree. Arrays held in properties (such as a table's `align`) and plain
 * object properties (such as a link's `attrs`) are copied too, so the clone shares no mutable
 * state with the original.
 * @param {object} node
 * @returns {object}
 */
export function cloneNode(node) {
  const copy = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "children") copy.children = value.map(cloneNode);
    else if (Array.isArray(value)) copy[key] = value.slice();
    else if (value !== null && typeof value === "object") copy[key] = { ...value };
    else copy[key] = value;
  }
  return copy;
}

/**
 * Compact one-line S-expression of a tree, for debugging and tests, e.g.
 * `(document (heading level=1 (text "Hi")))`. A node's `value` is printed first as a JSON
 * string; other properties follow as `key=JSON` sorted by key; undefined properties are omitted.
 * @param {object} node
 * @returns {string}
 */
export function formatTree(node) {
  const parts = [node.type];
  if (node.value !== undefined) parts.push(JSON.stringify(node.value));
  const keys = Object.keys(node)
    .filter((k) => k !== "type" && k !== "children" && k !== "value" && node[k] !== undefined)
    .sort();
  for (const key of keys) parts.push(`${key}=${JSON.stringify(node[key])}`);
  if (Array.isArray(node.children)) {
    for (const child of node.children) parts.push(formatTree(child));
  }
  return `(${parts.join(" ")})`;
}
