/**
 * Plugin API and built-in plugins. A plugin is an object with a `name` and any of four hooks:
 * `preprocess(source) -> string` (before parsing), `transform(ast, context) -> ast | undefined`
 * (after parsing; may mutate in place), `postprocess(html) -> string` (after rendering) and
 * `rules` (renderer rules per node type). Plugins run in the order given.
 * @module plugins
 */
import { REMOVE, walk } from "./ast.js";
import { escapeHtml } from "./entities.js";
import { PluginError } from "./errors.js";

const HOOKS = ["preprocess", "transform", "postprocess"];
const KNOWN_KEYS = new Set(["name", "rules", ...HOOKS]);

/**
 * Validate a plugin definition and return it frozen.
 * @param {{name: string, preprocess?: Function, transform?: Function, postprocess?: Function,
 *   rules?: Record<string, Function>}} spec
 * @returns {Readonly<object>}
 * @throws {PluginError} when `spec` is not an object, has no non-empty string `name`, has an
 *   unknown key, a hook that is not a function, or a `rules` entry that is not a function
 */
export function definePlugin(spec) {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    throw new PluginError("<anonymous>", "a plugin must be an object");
  }
  if (typeof spec.name !== "string" || spec.name === "") {
    throw new PluginError("<anonymous>", "a plugin needs a non-empty string name");
  }
  for (const key of Object.keys(spec)) {
    if (!KNOWN_KEYS.has(key)) throw new PluginError(spec.name, `unknown hook "${key}"`);
  }
  for (const hook of HOOKS) {
    if (spec[hook] !== undefined && typeof spec[hook] !== "function") {
      throw new PluginError(spec.name, `hook "${hook}" must be a function`);
    }
  }
  if (spec.rules !== undefined) {
    for (const [type, rule] of Object.entries(spec.rules)) {
      if (typeof rule !== "function") throw new PluginError(spec.name, `rule for "${type}" must be a function`);
    }
  }
  return Object.freeze({ ...spec });
}

/**
 * An ordered set of plugins and the operations that run their hooks.
 */
export class PluginPipeline {
  /**
   * @param {object[]} [plugins] plugin definitions (validated with {@link definePlugin})
   * @throws {PluginError} for an invalid plugin or two plugins with the same name
   */
  constructor(plugins = []) {
    const seen = new Set();
    this.plugins = plugins.map((spec) => {
      const plugin = definePlugin(spec);
      if (seen.has(plugin.name)) throw new PluginError(plugin.name, "registered twice");
      seen.add(plugin.name);
      return plugin;
    });
  }

  /**
   * Names of the plugins, in order.
   * @returns {string[]}
   */
  get names() {
    return this.plugins.map((p) => p.name);
  }

  /**
   * Run every `preprocess` hook on the source text in turn.
   * @param {string} source
   * @returns {string}
   * @throws {PluginError} when a hook returns a non-string
   */
  preprocess(source) {
    let text = source;
    for (const plugin of this.plugins) {
      if (plugin.preprocess === undefined) continue;
      text = plugin.preprocess(text);
      if (typeof text !== "string") throw new PluginError(plugin.name, "preprocess must return a string");
    }
    return text;
  }

  /**
   * Run every `transform` hook. A hook may mutate the tree and return undefined, or return a
   * replacement document node.
   * @param {object} ast a document node
   * @param {object} [context] passed to each hook as its second argument
   * @returns {object} the final document node
   * @throws {PluginError} when a hook returns something other than undefined or a document node
   */
  transform(ast, context = {}) {
    let tree = ast;
    for (const plugin of this.plugins) {
      if (plugin.transform === undefined) continue;
      const result = plugin.transform(tree, context);
      if (result === undefined) continue;
      if (result === null || typeof result !== "object" || result.type !== "document") {
        throw new PluginError(plugin.name, "transform must return undefined or a document node");
      }
      tree = result;
    }
    return tree;
  }

  /**
   * Run every `postprocess` hook on the rendered HTML in turn.
   * @param {string} html
   * @returns {string}
   * @throws {PluginError} when a hook returns a non-string
   */
  postprocess(html) {
    let out = html;
    for (const plugin of this.plugins) {
      if (plugin.postprocess === undefined) continue;
      out = plugin.postprocess(out);
      if (typeof out !== "string") throw new PluginError(plugin.name, "postprocess must return a string");
    }
    return out;
  }

  /**
   * Renderer rules contributed by all plugins; for the same node type, later plugins win.
   * @returns {Record<string, Function>}
   */
  rules() {
    const merged = {};
    for (const plugin of this.plugins) Object.assign(merged, plugin.rules ?? {});
    return merged;
  }
}

/**
 * Plugin that shifts heading levels by `offset`, clamping the result to 1..6 (useful when
 * embedding a document under an existing heading).
 * @param {number} offset an integer
 * @returns {object} the plugin
 * @throws {PluginError} when `offset` is not an integer
 */
export function headingOffsetPlugin(offset) {
  if (!Number.isInteger(offset)) throw new PluginError("heading-offset", "offset must be an integer");
  return definePlugin({
    name: "heading-offset",
    transform(ast) {
      walk(ast, (node) => {
        if (node.type === "heading") node.level = Math.min(6, Math.max(1, node.level + offset));
      });
    },
  });
}

/**
 * Plugin for GFM task lists: a list item whose first paragraph starts with `[ ]`, `[x]` or
 * `[X]` followed by a space gets `checked` set to false/true and the marker removed.
 * @returns {object} the plugin
 */
export function taskListPlugin() {
  return definePlugin({
    name: "task-list",
    transform(ast) {
      walk(ast, (node) => {
        if (node.type !== "list_item") return;
        const para = node.children[0];
        if (para === undefined || para.type !== "paragraph") return;
        const first = para.children[0];
        const m = first !== undefined && first.type === "text" ? /^\[([ xX])\][ \t]+/.exec(first.value) : null;
        if (m === null) return;
        node.checked = m[1] !== " ";
        first.value = first.value.slice(m[0].length);
        if (first.value === "") para.children.shift();
      });
    },
  });
}

/**
 * Plugin that marks links to other sites: every `http(s)` link whose host is not listed in
 * `internalHosts` gets `target` and `rel="noopener noreferrer"` attributes.
 * @param {{internalHosts?: string[], target?: string}} [options] hosts compare
 *   case-insensitively; `target` defaults to `_blank`
 * @returns {object} the plugin
 */
export function externalLinksPlugin(options = {}) {
  const internal = new Set((options.internalHosts ?? []).map((h) => h.toLowerCase()));
  const target = options.target ?? "_blank";
  return definePlugin({
    name: "external-links",
    transform(ast) {
      walk(ast, (node) => {
        if (node.type !== "link") return;
        const m = /^https?:\/\/([^/?#:]+)/i.exec(node.href);
        if (m === null || internal.has(m[1].toLowerCase())) return;
        node.attrs = { ...node.attrs, target, rel: "noopener noreferrer" };
      });
    },
  });
}

/**
 * Plugin that removes every node of the given types (for example `["image", "html_block"]`).
 * @param {string[]} types node types to drop
 * @returns {object} the plugin
 * @throws {PluginError} when `types` is not an array of strings
 */
export function stripNodesPlugin(types) {
  if (!Array.isArray(types) || types.some((t) => typeof t !== "string")) {
    throw new PluginError("strip-nodes", "types must be an array of strings");
  }
  const drop = new Set(types);
  return definePlugin({
    name: "strip-nodes",
    transform(ast) {
      walk(ast, (node, parent) => (parent !== null && drop.has(node.type) ? REMOVE : undefined));
    },
  });
}

const OPENING_CONTEXT = /[\s([{\u2014\u2013-]/u;

/**
 * Apply typographic replacements to plain text: `---` to an em dash, `--` to an en dash,
 * `...` to an ellipsis, straight double quotes to curly ones (opening at the start or after
 * whitespace, an opening bracket or a dash; closing otherwise), and single quotes to curly
 * ones, where a quote between a letter/digit and a letter is an apostrophe.
 * @param {string} text
 * @param {string} [before=""] the character preceding `text` ("" for start of block)
 * @returns {string}
 */
export function smartenText(text, before = "") {
  let out = "";
  let prev = before;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    let rep = ch;
    if (text.startsWith("---", i)) {
      rep = "\u2014";
      i += 2;
    } else if (text.startsWith("--", i)) {
      rep = "\u2013";
      i += 1;
    } else if (text.startsWith("...", i)) {
      rep = "\u2026";
      i += 2;
    } else if (ch === "\"") {
      rep = prev === "" || OPENING_CONTEXT.test(prev) ? "\u201c" : "\u201d";
    } else if (ch === "'") {
      const next = text[i + 1] ?? "";
      if (/[\p{L}\p{N}]/u.test(prev) && /\p{L}/u.test(next)) rep = "\u2019";
      else rep = prev === "" || OPENING_CONTEXT.test(prev) ? "\u2018" : "\u2019";
    }
    out += rep;
    prev = rep;
  }
  return out;
}

/**
 * Plugin applying {@link smartenText} to the text of every paragraph, heading and table cell.
 * Quote direction looks across node boundaries (`*a*"` closes after the emphasis); code spans
 * and raw HTML are left untouched, as are code blocks.
 * @returns {object} the plugin
 */
export function typographerPlugin() {
  const smartenInlines = (nodes, state) => {
    for (const node of nodes) {
      if (node.type === "text") {
        node.value = smartenText(node.value, state.prev);
        if (node.value !== "") state.prev = node.value[node.value.length - 1];
      } else if (node.type === "code") {
        state.prev = node.value.slice(-1) || state.prev;
      } else if (node.type === "softbreak" || node.type === "hardbreak") {
        state.prev = " ";
      } else if (Array.isArray(node.children)) {
        smartenInlines(node.children, state);
      }
    }
  };
  return definePlugin({
    name: "typographer",
    transform(ast) {
      walk(ast, (node) => {
        if (node.type === "paragraph" || node.type === "heading" || node.type === "table_cell") {
          smartenInlines(node.children, { prev: "" });
        }
      });
    },
  });
}

/**
 * Plugin that wraps every table in `<div class="...">` for horizontal scrolling, via a
 * renderer rule that delegates to the built-in table rendering.
 * @param {string} [className="table-wrapper"]
 * @returns {object} the plugin
 */
export function tableWrapperPlugin(className = "table-wrapper") {
  return definePlugin({
    name: "table-wrapper",
    rules: {
      table(node, renderer) {
        return `<div class="${escapeHtml(className)}">\n${renderer.renderTable(node)}</div>\n`;
      },
    },
  });
}
