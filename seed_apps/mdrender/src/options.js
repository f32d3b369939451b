/**
 * Option handling for the public API: defaults, and validation that rejects unknown option
 * names and values of the wrong type with an {@link OptionsError}.
 * @module options
 */
import { OptionsError } from "./errors.js";

/**
 * Default values of every supported option.
 * - `safe`: omit raw HTML and unsafe URLs when rendering
 * - `headingIds`: give headings unique `id` attributes derived from their text
 * - `headingIdPrefix`: string prepended to generated heading ids
 * - `softBreak`: HTML emitted for a soft line break
 * - `langPrefix`: class prefix for fenced code languages
 * - `tabSize`: tab stop width used when expanding indentation (1-16)
 * - `maxNesting`: deepest allowed nesting of block quotes and lists (>= 1)
 * - `tables`, `strikethrough`: enable the GFM extensions
 * - `plugins`: plugin definitions (see the plugins module)
 */
export const DEFAULT_OPTIONS = Object.freeze({
  safe: false,
  headingIds: false,
  headingIdPrefix: "",
  softBreak: "\n",
  langPrefix: "language-",
  tabSize: 4,
  maxNesting: 64,
  tables: true,
  strikethrough: true,
  plugins: Object.freeze([]),
});

const isBoolean = (v) => typeof v === "boolean";
const isString = (v) => typeof v === "string";

const VALIDATORS = {
  safe: [isBoolean, "must be a boolean"],
  headingIds: [isBoolean, "must be a boolean"],
  headingIdPrefix: [isString, "must be a string"],
  softBreak: [isString, "must be a string"],
  langPrefix: [isString, "must be a string"],
  tabSize: [(v) => Number.isInteger(v) && v >= 1 && v <= 16, "must be an integer from 1 to 16"],
  maxNesting: [(v) => Number.isInteger(v) && v >= 1, "must be a positive integer"],
  tables: [isBoolean, "must be a boolean"],
  strikethrough: [isBoolean, "must be a boolean"],
  plugins: [Array.isArray, "must be an array of plugins"],
};

/**
 * Merge user options over {@link DEFAULT_OPTIONS} after validating them. Options whose value
 * is `undefined` are treated as absent.
 * @param {object} [options]
 * @returns {Readonly<typeof DEFAULT_OPTIONS>} a frozen, complete option set
 * @throws {OptionsError} when `options` is not a plain object, names an unknown option, or
 *   gives an option a value of the wrong type or range
 */
export function normalizeOptions(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new OptionsError("options", "must be an object");
  }
  const merged = { ...DEFAULT_OPTIONS };
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(VALIDATORS, key)) {
      throw new OptionsError(key, `unknown option; known options are ${Object.keys(VALIDATORS).join(", ")}`);
    }
    if (value === undefined) continue;
    const [valid, requirement] = VALIDATORS[key];
    if (!valid(value)) throw new OptionsError(key, requirement);
    merged[key] = value;
  }
  return Object.freeze(merged);
}
