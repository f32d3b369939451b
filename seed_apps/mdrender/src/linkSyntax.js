/**
 * Scanners for the pieces of link syntax shared by block parsing (link reference
 * definitions) and inline parsing (inline and reference links): labels, destinations,
 * titles, and the reference map.
 * All scanners take the full text and a start index and return the index just past what they
 * consumed, or null when the syntax does not match.
 * @module linkSyntax
 */
import { unescapeString } from "./entities.js";

const MAX_LABEL_LENGTH = 999;
const MAX_PAREN_DEPTH = 32;

/**
 * Normalize a link label for matching: trim, collapse internal whitespace runs to one space,
 * and case-fold (so `Foo  BAR` and `foo bar` match, as do `ß` and `SS`).
 * @param {string} label the raw label text between the brackets
 * @returns {string}
 */
export function normalizeLabel(label) {
  return label.trim().replace(/\s+/g, " ").toLowerCase().toUpperCase();
}

/**
 * Skip spaces and tabs plus at most one line ending.
 * @param {string} text
 * @param {number} pos
 * @returns {number} index of the first character not skipped
 */
export function skipSpace(text, pos) {
  let p = pos;
  let newlineSeen = false;
  while (p < text.length) {
    const ch = text[p];
    if (ch === " " || ch === "\t") p += 1;
    else if (ch === "\n" && !newlineSeen) {
      newlineSeen = true;
      p += 1;
    } else break;
  }
  return p;
}

/**
 * Scan a link label `[...]` starting at `pos`. Backslash escapes are allowed; an unescaped
 * `[` inside, more than 999 characters, or a label of only whitespace make the scan fail.
 * @param {string} text
 * @param {number} pos index of the opening `[`
 * @returns {{label: string, end: number} | null} raw label (without brackets) and the index
 *   after the closing `]`
 */
export function scanLinkLabel(text, pos) {
  if (text[pos] !== "[") return null;
  let p = pos + 1;
  while (p < text.length && p - pos - 1 <= MAX_LABEL_LENGTH) {
    const ch = text[p];
    if (ch === "\\" && p + 1 < text.length) p += 2;
    else if (ch === "[") return null;
    else if (ch === "]") {
      const label = text.slice(pos + 1, p);
      if (label.length > MAX_LABEL_LENGTH || label.trim() === "") return null;
      return { label, end: p + 1 };
    } else p += 1;
  }
  return null;
}

/**
 * Scan a link destination at `pos`: either `<...>` (no line breaks or unescaped `<`/`>`
 * inside, may be empty) or a bare run of non-space, non-control characters in which
 * parentheses must balance (nesting limited to 32 levels). The destination returned has its
 * backslash escapes and entities resolved.
 * @param {string} text
 * @param {number} pos
 * @returns {{destination: string, end: number} | null}
 */
export function scanLinkDestination(text, pos) {
  if (text[pos] === "<") {
    let p = pos + 1;
    while (p < text.length) {
      const ch = text[p];
      if (ch === "\\" && p + 1 < text.length) p += 2;
      else if (ch === "\n" || ch === "<") return null;
      else if (ch === ">") return { destination: unescapeString(text.slice(pos + 1, p)), end: p + 1 };
      else p += 1;
    }
    return null;
  }
  let p = pos;
  let depth = 0;
  while (p < text.length) {
    const ch = text[p];
    const code = text.charCodeAt(p);
    if (ch === "\\" && p + 1 < text.length && text[p + 1] !== "\n") {
      p += 2;
    } else if (code <= 0x20 || code === 0x7f) {
      break;
    } else if (ch === "(") {
      depth += 1;
      if (depth > MAX_PAREN_DEPTH) return null;
      p += 1;
    } else if (ch === ")") {
      if (depth === 0) break;
      depth -= 1;
      p += 1;
    } else {
      p += 1;
    }
  }
  if (p === pos || depth !== 0) return null;
  return { destination: unescapeString(text.slice(pos, p)), end: p };
}

/**
 * Scan a link title at `pos`: `"..."`, `'...'` or `(...)`. Backslash escapes are honoured;
 * a `(`-title may not contain an unescaped `(`; a title may not contain a blank line.
 * @param {string} text
 * @param {number} pos
 * @returns {{title: string, end: number} | null} the unescaped title and the index after
 *   the closing delimiter
 */
export function scanLinkTitle(text, pos) {
  const open = text[pos];
  let close;
  if (open === "\"" || open === "'") close = open;
  else if (open === "(") close = ")";
  else return null;
  let p = pos + 1;
  while (p < text.length) {
    const ch = text[p];
    if (ch === "\\" && p + 1 < text.length) p += 2;
    else if (ch === close) {
      const raw = text.slice(pos + 1, p);
      if (/\n[ \t]*\n/.test(raw)) return null;
      return { title: unescapeString(raw), end: p + 1 };
    } else if (open === "(" && ch === "(") return null;
    else p += 1;
  }
  return null;
}

/**
 * Scan the parenthesised tail of an inline link, `(destination "title")`, starting at the `(`.
 * Destination and title are optional; whitespace (with at most one line ending) may surround
 * them, and the title must be separated from the destination by whitespace.
 * @param {string} text
 * @param {number} pos index of `(`
 * @returns {{destination: string, title: string | null, end: number} | null} `end` is the
 *   index after `)`
 */
export function scanInlineLinkTail(text, pos) {
  if (text[pos] !== "(") return null;
  let p = skipSpace(text, pos + 1);
  let destination = "";
  if (text[p] !== ")") {
    const dest = scanLinkDestination(text, p);
    if (dest === null) return null;
    destination = dest.destination;
    p = dest.end;
  }
  let q = skipSpace(text, p);
  let title = null;
  if (q > p) {
    const t = scanLinkTitle(text, q);
    if (t !== null) {
      title = t.title;
      q = skipSpace(text, t.end);
    }
  }
  if (text[q] !== ")") return null;
  return { destination, title, end: q + 1 };
}

/**
 * If only spaces/tabs remain on the line containing `pos`, the index after that line's end
 * (or the text length); otherwise -1.
 */
function restOfLineIsBlank(text, pos) {
  const nl = text.indexOf("\n", pos);
  const rest = text.slice(pos, nl === -1 ? text.length : nl);
  return /^[ \t]*$/.test(rest) ? (nl === -1 ? text.length : nl + 1) : -1;
}

/**
 * Parse one link reference definition (`[label]: destination "optional title"`) at `pos`.
 * The definition must end at a line end; when a would-be title is followed by other text on
 * its line, the definition is accepted without the title if the destination ended its line.
 * @param {string} text paragraph text (lines joined with `\n`)
 * @param {number} pos index of the `[`
 * @returns {{label: string, destination: string, title: string | null, end: number} | null}
 *   `label` is normalized with {@link normalizeLabel}; `end` is the index after the line end
 */
export function parseReferenceDefinition(text, pos) {
  const label = scanLinkLabel(text, pos);
  if (label === null || text[label.end] !== ":") return null;
  const destStart = skipSpace(text, label.end + 1);
  const dest = scanLinkDestination(text, destStart);
  if (dest === null) return null;
  const base = { label: normalizeLabel(label.label), destination: dest.destination };
  const titleStart = skipSpace(text, dest.end);
  if (titleStart > dest.end) {
    const title = scanLinkTitle(text, titleStart);
    if (title !== null) {
      const end = restOfLineIsBlank(text, title.end);
      if (end !== -1) return { ...base, title: title.title, end };
    }
  }
  const end = restOfLineIsBlank(text, dest.end);
  return end === -1 ? null : { ...base, title: null, end };
}

/**
 * Remove the link reference definitions at the start of a paragraph, recording them in `refs`.
 * The first definition of a label wins; later ones are consumed but ignored.
 * @param {string} text paragraph text (lines joined with `\n`, leading indentation removed)
 * @param {Map<string, {destination: string, title: string | null}>} refs map to fill, keyed
 *   by normalized label
 * @returns {string} the remaining paragraph text (possibly empty)
 */
export function extractReferenceDefinitions(text, refs) {
  let pos = 0;
  while (pos < text.length && text[pos] === "[") {
    const def = parseReferenceDefinition(text, pos);
    if (def === null) break;
    if (!refs.has(def.label)) refs.set(def.label, { destination: def.destination, title: def.title });
    pos = def.end;
  }
  return text.slice(pos);
}
