/**
 * Source preparation: turns raw markdown text into the array of lines the block parser
 * works on, plus small line-level helpers (indentation, blank detection) shared by the
 * block-level modules.
 * @module source
 */
import { InputError } from "./errors.js";

/**
 * Convert CRLF and lone CR line endings to LF.
 * @param {string} text
 * @returns {string}
 */
export function normalizeNewlines(text) {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * Remove a leading byte-order mark (U+FEFF), if present.
 * @param {string} text
 * @returns {string}
 */
export function stripBom(text) {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Expand tab characters that occur in a line's leading whitespace to spaces, honouring tab
 * stops every `tabSize` columns (a tab after two spaces with tabSize 4 becomes two spaces).
 * Tabs after the first non-whitespace character are left alone.
 * @param {string} line a single line without its newline
 * @param {number} [tabSize=4] distance between tab stops
 * @param {number} [startColumn=0] column at which `line` starts (for text that follows a
 *   container marker such as `>` or `-`)
 * @returns {string}
 */
export function expandLeadingTabs(line, tabSize = 4, startColumn = 0) {
  let column = startColumn;
  let i = 0;
  let prefix = "";
  while (i < line.length && (line[i] === " " || line[i] === "\t")) {
    const width = line[i] === "\t" ? tabSize - (column % tabSize) : 1;
    prefix += " ".repeat(width);
    column += width;
    i += 1;
  }
  return i === 0 ? line : prefix + line.slice(i);
}

/**
 * Split text into lines on `\n`. A single trailing newline does not produce an extra
 * empty line; the empty string yields no lines.
 * @param {string} text text with normalized newlines
 * @returns {string[]}
 */
export function splitLines(text) {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Check that parser input is a string.
 * @param {unknown} markdown
 * @throws {InputError} naming the actual type (or "null") when it is not a string
 */
export function assertMarkdownString(markdown) {
  if (typeof markdown !== "string") {
    throw new InputError(`markdown input must be a string, got ${markdown === null ? "null" : typeof markdown}`);
  }
}

/**
 * Full preparation pipeline for parser input: reject non-strings, strip a BOM, normalize
 * newlines, replace NUL characters with U+FFFD, split into lines and expand leading tabs.
 * @param {string} markdown the document
 * @param {{tabSize?: number}} [options]
 * @returns {string[]} the document's lines
 * @throws {InputError} when `markdown` is not a string
 */
export function prepareSource(markdown, options = {}) {
  assertMarkdownString(markdown);
  const tabSize = options.tabSize ?? 4;
  const text = normalizeNewlines(stripBom(markdown)).replace(/\u0000/g, "\ufffd");
  return splitLines(text).map((line) => expandLeadingTabs(line, tabSize));
}

/**
 * Number of leading space characters of a line.
 * @param {string} line
 * @returns {number}
 */
export function leadingSpaces(line) {
  let n = 0;
  while (n < line.length && line[n] === " ") n += 1;
  return n;
}

/**
 * Whether a line is empty or contains only spaces and tabs.
 * @param {string} line
 * @returns {boolean}
 */
export function isBlank(line) {
  return /^[ \t]*$/.test(line);
}

/**
 * Remove up to `count` leading spaces from a line (fewer if the line has fewer).
 * @param {string} line
 * @param {number} count
 * @returns {string}
 */
export function stripIndent(line, count) {
  return line.slice(Math.min(count, leadingSpaces(line)));
}
