/**
 * Exception hierarchy for mdrender. Every error the library raises on purpose derives from
 * {@link MarkdownError}, so callers can catch the library's errors without also swallowing
 * programming errors (TypeError from a bug, etc.).
 * @module errors
 */

/**
 * Base class of all errors raised deliberately by mdrender.
 * The `name` property is set to the concrete subclass name.
 */
export class MarkdownError extends Error {
  /**
   * @param {string} message human-readable description of the problem
   * @param {ErrorOptions} [options] standard error options (e.g. `cause`)
   */
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Raised when the markdown input itself is unusable (for example, not a string). */
export class InputError extends MarkdownError {}

/**
 * Raised when an option passed to `render`/`parse` is unknown or has the wrong type.
 * The offending option name is available as `option`.
 */
export class OptionsError extends MarkdownError {
  /**
   * @param {string} option name of the offending option
   * @param {string} message what is wrong and what is accepted
   */
  constructor(option, message) {
    super(`option "${option}": ${message}`);
    this.option = option;
  }
}

/** Raised when block containers (quotes, lists) nest deeper than the `maxNesting` option. */
export class NestingError extends MarkdownError {
  /**
   * @param {number} limit the configured maximum nesting depth
   */
  constructor(limit) {
    super(`block nesting exceeds the limit of ${limit}; raise the maxNesting option to allow it`);
    this.limit = limit;
  }
}

/** Raised for malformed AST nodes: unknown node types, or children on a leaf node. */
export class AstError extends MarkdownError {}

/** Raised when a plugin definition is invalid or two plugins share a name. */
export class PluginError extends MarkdownError {
  /**
   * @param {string} plugin name of the plugin (or "<anonymous>")
   * @param {string} message what is wrong
   */
  constructor(plugin, message) {
    super(`plugin "${plugin}": ${message}`);
    this.plugin = plugin;
  }
}

/** Raised by the renderer when it meets a node type it has no rule for. */
export class RenderError extends MarkdownError {
  /**
   * @param {string} nodeType the node type that could not be rendered
   */
  constructor(nodeType) {
    super(`no HTML rule for node type "${nodeType}"`);
    this.nodeType = nodeType;
  }
}
