/**
 * GFM pipe tables: splitting rows into cells, reading the delimiter row's column alignments,
 * and assembling a table node from consecutive lines.
 * @module blocks/tables
 */
import { createNode } from "../ast.js";
import { isBlank, leadingSpaces } from "../source.js";

/**
 * Split a table row into trimmed cell texts. A leading and a trailing unescaped `|` are
 * optional and ignored; `\|` yields a literal `|` inside a cell (the backslash is dropped),
 * while other backslash escapes are kept for the inline parser.
 * @param {string} line
 * @returns {string[]}
 */
export function splitTableRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  const cells = [];
  let cell = "";
  let closed = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    closed = false;
    if (ch === "\\" && s[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else if (ch === "\\" && i + 1 < s.length) {
      cell += ch + s[i + 1];
      i += 1;
    } else if (ch === "|") {
      cells.push(cell.trim());
      cell = "";
      closed = true;
    } else {
      cell += ch;
    }
  }
  if (!closed || cells.length === 0) cells.push(cell.trim());
  return cells;
}

/**
 * Parse a delimiter row such as `| :--- | :---: | ---: | --- |`. Every cell must consist of
 * one or more `-`, optionally with a leading and/or trailing `:`.
 * @param {string} line
 * @returns {Array<"left" | "center" | "right" | null> | null} alignment per column, or null
 *   when the line is not a delimiter row
 */
export function parseDelimiterRow(line) {
  if (leadingSpaces(line) >= 4) return null;
  const cells = splitTableRow(line);
  const aligns = [];
  for (const cell of cells) {
    const m = /^(:?)-+(:?)$/.exec(cell);
    if (m === null) return null;
    if (m[1] && m[2]) aligns.push("center");
    else if (m[1]) aligns.push("left");
    else if (m[2]) aligns.push("right");
    else aligns.push(null);
  }
  return aligns;
}

/** A table_row with one cell per column; missing cells are empty and extra cells dropped. */
function buildRow(cells, aligns, header) {
  const row = createNode("table_row", { header });
  aligns.forEach((align, i) => {
    row.children.push(createNode("table_cell", { align, header, raw: cells[i] ?? "" }));
  });
  return row;
}

/**
 * Try to read a table starting at `lines[start]`: a header row containing `|`, then a
 * delimiter row with the same number of cells, then body rows up to a blank line, the end of
 * input, or a line for which `endsTable` returns true. Body rows with too few cells are padded
 * with empty cells; extra cells are dropped. Cells keep their text in `raw` for the inline phase.
 * @param {string[]} lines
 * @param {number} start index of the header row
 * @param {(line: string) => boolean} endsTable predicate for lines that start another block
 * @returns {{node: object, next: number} | null} the table node and the index of the first
 *   line after it, or null when no table starts here
 */
export function tryParseTable(lines, start, endsTable) {
  if (start + 1 >= lines.length) return null;
  const header = lines[start];
  if (leadingSpaces(header) >= 4 || !header.includes("|")) return null;
  const aligns = parseDelimiterRow(lines[start + 1]);
  if (aligns === null) return null;
  const headerCells = splitTableRow(header);
  if (headerCells.length !== aligns.length) return null;
  const table = createNode("table", { align: aligns });
  table.children.push(buildRow(headerCells, aligns, true));
  let j = start + 2;
  while (j < lines.length && !isBlank(lines[j]) && !endsTable(lines[j])) {
    table.children.push(buildRow(splitTableRow(lines[j]), aligns, false));
    j += 1;
  }
  return { node: table, next: j };
}
