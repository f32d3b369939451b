/**
 * Line recognizers for block structure. Each function inspects one line (already stripped of
 * the markers of its enclosing containers) and reports whether, and how, it starts or ends a
 * block construct. They hold no state; the block parser combines them.
 * @module blocks/recognizers
 */
import { unescapeString } from "../entities.js";
import { expandLeadingTabs, isBlank, leadingSpaces } from "../source.js";
import { matchHtmlBlockStart } from "../htmlSyntax.js";

/**
 * Recognize an ATX heading (`## Title ##`): up to three spaces of indentation, 1-6 `#`
 * followed by a space/tab or the end of the line. An optional closing run of `#` preceded by
 * whitespace (or making up the whole content) is removed, as is surrounding whitespace.
 * @param {string} line
 * @returns {{level: number, content: string} | null}
 */
export function matchAtxHeading(line) {
  const m = /^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$/.exec(line);
  if (m === null) return null;
  const content = m[2].trim().replace(/(?:^|[ \t]+)#+[ \t]*$/, "");
  return { level: m[1].length, content };
}

/**
 * Recognize a setext heading underline: up to three spaces, then only `=` (level 1) or only
 * `-` (level 2), then optional trailing whitespace.
 * @param {string} line
 * @returns {number} 1 or 2, or 0 when the line is not an underline
 */
export function matchSetextUnderline(line) {
  const m = /^ {0,3}(=+|-+)[ \t]*$/.exec(line);
  if (m === null) return 0;
  return m[1][0] === "=" ? 1 : 2;
}

/**
 * Whether a line is a thematic break: up to three spaces, then three or more of the same
 * character among `*`, `-`, `_`, optionally separated by spaces or tabs, and nothing else.
 * @param {string} line
 * @returns {boolean}
 */
export function isThematicBreak(line) {
  return /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/.test(line);
}

/**
 * Recognize an opening code fence: up to three spaces, then three or more backticks or
 * tildes, then an optional info string. A backtick fence's info string may not contain a
 * backtick. The info string is trimmed and has escapes and entities resolved.
 * @param {string} line
 * @returns {{indent: number, char: string, length: number, info: string} | null}
 */
export function matchFenceOpen(line) {
  const m = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(line);
  if (m === null) return null;
  const char = m[2][0];
  if (char === "`" && m[3].includes("`")) return null;
  return { indent: m[1].length, char, length: m[2].length, info: unescapeString(m[3].trim()) };
}

/**
 * Whether `line` closes the given fence: up to three spaces, a run of the fence character at
 * least as long as the opening run, then only whitespace.
 * @param {string} line
 * @param {{char: string, length: number}} fence the opening fence
 * @returns {boolean}
 */
export function isFenceClose(line, fence) {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return m !== null && m[1][0] === fence.char && m[1].length >= fence.length;
}

/**
 * Recognize a block quote marker: up to three spaces and `>`, plus one optional following
 * space (a tab after `>` counts as the columns it spans).
 * @param {string} line
 * @returns {string | null} the rest of the line after the marker, or null
 */
export function matchBlockQuoteMarker(line) {
  const m = /^( {0,3})>/.exec(line);
  if (m === null) return null;
  const rest = expandLeadingTabs(line.slice(m[0].length), 4, m[0].length);
  return rest.startsWith(" ") ? rest.slice(1) : rest;
}

/**
 * Recognize a list item marker: up to three spaces, then a bullet (`-`, `+`, `*`) or an
 * ordered marker (1-9 digits followed by `.` or `)`), then whitespace or the end of line.
 *
 * `contentIndent` is the column where the item's content starts, which continuation lines
 * must reach: marker end plus the following spaces, except that when the marker is followed
 * by five or more spaces (content is indented code) or by nothing (`blankStart`), it is the
 * marker end plus one.
 * @param {string} line
 * @returns {{ordered: boolean, marker: string, start: number | null, indent: number,
 *   contentIndent: number, content: string, blankStart: boolean} | null}
 */
export function matchListMarker(line) {
  const m = /^( {0,3})(?:([-+*])|(\d{1,9})([.)]))(?=[ \t]|$)/.exec(line);
  if (m === null) return null;
  const indent = m[1].length;
  const markerEnd = m[0].length;
  const ordered = m[3] !== undefined;
  const after = expandLeadingTabs(line.slice(markerEnd), 4, markerEnd);
  const base = {
    ordered,
    marker: ordered ? m[4] : m[2],
    start: ordered ? Number.parseInt(m[3], 10) : null,
    indent,
  };
  if (isBlank(after)) return { ...base, contentIndent: markerEnd + 1, content: "", blankStart: true };
  const spaces = leadingSpaces(after);
  if (spaces >= 5) return { ...base, contentIndent: markerEnd + 1, content: after.slice(1), blankStart: false };
  return { ...base, contentIndent: markerEnd + spaces, content: after.slice(spaces), blankStart: false };
}

/**
 * Whether a non-blank line can interrupt an open paragraph (so the paragraph ends before it):
 * ATX headings, fences, thematic breaks, block quotes, HTML blocks of kinds 1-6, and list
 * items that are not empty and, when ordered, start at 1. Lines indented four or more
 * spaces never interrupt.
 * @param {string} line
 * @returns {boolean}
 */
export function interruptsParagraph(line) {
  if (leadingSpaces(line) >= 4) return false;
  if (matchAtxHeading(line) !== null || matchFenceOpen(line) !== null) return true;
  if (isThematicBreak(line) || matchBlockQuoteMarker(line) !== null) return true;
  const html = matchHtmlBlockStart(line);
  if (html >= 1 && html <= 6) return true;
  const item = matchListMarker(line);
  return item !== null && !item.blankStart && (!item.ordered || item.start === 1);
}
