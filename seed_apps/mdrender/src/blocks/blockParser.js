/**
 * Block-structure parser: turns the prepared source lines into a tree of block nodes.
 *
 * The parser is recursive over container blocks: a block quote or list item collects the
 * lines that belong to it (stripping its markers/indentation and admitting lazy continuation
 * lines), then parses those lines as a nested block sequence. Leaf blocks whose content is
 * inline markdown (paragraphs, headings, table cells) keep their text in a `raw` property;
 * the inline phase replaces it with children once all link reference definitions are known.
 * @module blocks/blockParser
 */
import { createNode } from "../ast.js";
import { NestingError } from "../errors.js";
import { extractReferenceDefinitions } from "../linkSyntax.js";
import { isBlank, leadingSpaces, stripIndent } from "../source.js";
import { htmlBlockEnds, matchHtmlBlockStart } from "../htmlSyntax.js";
import {
  interruptsParagraph, isFenceClose, isThematicBreak, matchAtxHeading, matchBlockQuoteMarker,
  matchFenceOpen, matchListMarker, matchSetextUnderline,
} from "./recognizers.js";
import { tryParseTable } from "./tables.js";

const DEFAULT_MAX_NESTING = 64;

/** Remove leading spaces and tabs (paragraph continuation lines keep no indentation). */
function stripLeadingWhitespace(line) {
  return line.replace(/^[ \t]+/, "");
}

/**
 * Parser for the block structure of a document.
 */
export class BlockParser {
  /**
   * @param {object} [options]
   * @param {Map<string, {destination: string, title: string | null}>} [options.refs] map that
   *   receives link reference definitions (keyed by normalized label; first definition wins)
   * @param {number} [options.maxNesting=64] deepest allowed nesting of quotes and lists
   * @param {boolean} [options.tables=true] recognize GFM tables
   */
  constructor(options = {}) {
    this.refs = options.refs ?? new Map();
    this.maxNesting = options.maxNesting ?? DEFAULT_MAX_NESTING;
    this.tables = options.tables ?? true;
  }

  /**
   * Parse a whole document.
   * @param {string[]} lines prepared source lines (see `prepareSource`)
   * @returns {object} a `document` node
   * @throws {NestingError} when containers nest deeper than `maxNesting`
   */
  parse(lines) {
    return createNode("document", { children: this.parseBlocks(lines, 0).blocks });
  }

  /**
   * Parse a sequence of lines belonging to one container into sibling blocks.
   * @param {string[]} lines lines relative to the container (markers and indentation removed)
   * @param {number} depth container nesting depth of these lines (0 for the document)
   * @returns {{blocks: object[], blankBetween: boolean}} the blocks, and whether a blank line
   *   separated any two of them (used for list looseness)
   * @throws {NestingError} when `depth` exceeds `maxNesting`
   */
  parseBlocks(lines, depth) {
    if (depth > this.maxNesting) throw new NestingError(this.maxNesting);
    const blocks = [];
    let blankBetween = false;
    let pendingBlank = false;
    let i = 0;
    while (i < lines.length) {
      if (isBlank(lines[i])) {
        pendingBlank = true;
        i += 1;
        continue;
      }
      const { node, next } = this.parseBlockAt(lines, i, depth);
      if (node !== null) {
        if (pendingBlank && blocks.length > 0) blankBetween = true;
        blocks.push(node);
      }
      pendingBlank = false;
      i = next;
    }
    return { blocks, blankBetween };
  }

  /**
   * Parse the block that starts at the non-blank line `lines[i]`, trying constructs in
   * CommonMark precedence order: indented code, fenced code, ATX heading, thematic break,
   * block quote, HTML block, list, table, paragraph.
   * @param {string[]} lines
   * @param {number} i
   * @param {number} depth
   * @returns {{node: object | null, next: number}} the block (null when the lines held only
   *   link reference definitions) and the index of the first line after it
   */
  parseBlockAt(lines, i, depth) {
    const line = lines[i];
    if (leadingSpaces(line) >= 4) return this.parseIndentedCode(lines, i);
    const fence = matchFenceOpen(line);
    if (fence !== null) return this.parseFencedCode(lines, i, fence);
    const heading = matchAtxHeading(line);
    if (heading !== null) {
      return { node: createNode("heading", { level: heading.level, raw: heading.content }), next: i + 1 };
    }
    if (isThematicBreak(line)) return { node: createNode("thematic_break"), next: i + 1 };
    if (matchBlockQuoteMarker(line) !== null) return this.parseBlockQuote(lines, i, depth);
    const htmlKind = matchHtmlBlockStart(line);
    if (htmlKind !== 0) return this.parseHtmlBlock(lines, i, htmlKind);
    if (matchListMarker(line) !== null) return this.parseList(lines, i, depth);
    if (this.tables) {
      const table = tryParseTable(lines, i, interruptsParagraph);
      if (table !== null) return table;
    }
    return this.parseParagraph(lines, i);
  }

  /**
   * Parse a paragraph starting at `lines[i]`, or a setext heading when an underline follows
   * its text. Continuation lines are taken until a blank line or a line that interrupts a
   * paragraph. Link reference definitions at the start are moved into `refs`.
   * @param {string[]} lines
   * @param {number} i
   * @returns {{node: object | null, next: number}}
   */
  parseParagraph(lines, i) {
    const buffer = [stripLeadingWhitespace(lines[i])];
    let j = i + 1;
    while (j < lines.length && !isBlank(lines[j])) {
      const level = matchSetextUnderline(lines[j]);
      if (level !== 0) {
        const text = extractReferenceDefinitions(buffer.join("\n"), this.refs);
        // A paragraph made only of definitions cannot become a heading; the underline line
        // then starts a block of its own.
        if (text === "") return { node: null, next: j };
        return { node: createNode("heading", { level, raw: text.trimEnd() }), next: j + 1 };
      }
      if (interruptsParagraph(lines[j])) break;
      buffer.push(stripLeadingWhitespace(lines[j]));
      j += 1;
    }
    const text = extractReferenceDefinitions(buffer.join("\n"), this.refs);
    if (text === "") return { node: null, next: j };
    return { node: createNode("paragraph", { raw: text.trimEnd() }), next: j };
  }

  /**
   * Parse an indented code block: lines indented four or more spaces, with blank lines
   * allowed inside. Four spaces of indentation are removed; trailing blank lines are not part
   * of the block.
   * @param {string[]} lines
   * @param {number} i
   * @returns {{node: object, next: number}}
   */
  parseIndentedCode(lines, i) {
    const buffer = [];
    let j = i;
    while (j < lines.length && (isBlank(lines[j]) || leadingSpaces(lines[j]) >= 4)) {
      buffer.push(stripIndent(lines[j], 4));
      j += 1;
    }
    while (isBlank(buffer[buffer.length - 1])) {
      buffer.pop();
      j -= 1;
    }
    return {
      node: createNode("code_block", { value: `${buffer.join("\n")}\n`, info: "", fenced: false }),
      next: j,
    };
  }

  /**
   * Parse a fenced code block whose opening fence is `lines[i]`. Content runs to the closing
   * fence or to the end of the container; the opening fence's indentation is removed from each
   * content line.
   * @param {string[]} lines
   * @param {number} i
   * @param {{indent: number, char: string, length: number, info: string}} fence
   * @returns {{node: object, next: number}}
   */
  parseFencedCode(lines, i, fence) {
    const buffer = [];
    let j = i + 1;
    while (j < lines.length) {
      if (isFenceClose(lines[j], fence)) {
        j += 1;
        break;
      }
      buffer.push(stripIndent(lines[j], fence.indent));
      j += 1;
    }
    const value = buffer.length === 0 ? "" : `${buffer.join("\n")}\n`;
    return { node: createNode("code_block", { value, info: fence.info, fenced: true }), next: j };
  }

  /**
   * Parse an HTML block of the given kind starting at `lines[i]`. Kinds 1-5 run to the line
   * containing their end marker (inclusive); kinds 6 and 7 run to the next blank line.
   * @param {string[]} lines
   * @param {number} i
   * @param {number} kind
   * @returns {{node: object, next: number}}
   */
  parseHtmlBlock(lines, i, kind) {
    const buffer = [];
    let j = i;
    while (j < lines.length) {
      if (kind >= 6 && isBlank(lines[j])) break;
      buffer.push(lines[j]);
      j += 1;
      if (kind <= 5 && htmlBlockEnds(lines[j - 1], kind)) break;
    }
    return { node: createNode("html_block", { value: buffer.join("\n") }), next: j };
  }

  /**
   * Parse a block quote starting at `lines[i]`. Lines with a `>` marker belong to it; a line
   * without the marker belongs to it only as a lazy continuation of a paragraph.
   * @param {string[]} lines
   * @param {number} i
   * @param {number} depth
   * @returns {{node: object, next: number}}
   */
  parseBlockQuote(lines, i, depth) {
    const inner = [];
    let j = i;
    let afterLazy = false;
    while (j < lines.length) {
      const rest = matchBlockQuoteMarker(lines[j]);
      if (rest !== null) inner.push(rest);
      else if (isBlank(lines[j]) || !this.isLazyContinuation(inner, lines[j], depth, afterLazy)) break;
      else inner.push(lines[j]);
      afterLazy = rest === null;
      j += 1;
    }
    const children = this.parseBlocks(inner, depth + 1).blocks;
    return { node: createNode("blockquote", { children }), next: j };
  }

  /**
   * Whether `line` (which lacks its container's marker or indentation) continues the
   * paragraph that `containerLines` currently end with. It must not be blank, a list item, a
   * setext underline, or a line that interrupts paragraphs, and the container's last line
   * must be inside an open paragraph.
   * @param {string[]} containerLines the container's lines collected so far
   * @param {string} line candidate lazy line
   * @param {number} depth nesting depth of the container
   * @param {boolean} [afterLazy=false] the last container line was itself an accepted lazy
   *   line, so the container is known to end in a paragraph (saves re-parsing)
   * @returns {boolean}
   */
  isLazyContinuation(containerLines, line, depth, afterLazy = false) {
    if (containerLines.length === 0 || isBlank(containerLines[containerLines.length - 1])) return false;
    if (matchSetextUnderline(line) !== 0 || matchListMarker(line) !== null || interruptsParagraph(line)) {
      return false;
    }
    if (afterLazy) return true;
    const probe = new BlockParser({ refs: new Map(), maxNesting: this.maxNesting, tables: this.tables });
    let last = probe.parseBlocks(containerLines, depth + 1).blocks.at(-1);
    while (last !== undefined && (last.type === "blockquote" || last.type === "list" || last.type === "list_item")) {
      last = last.children.at(-1);
    }
    return last !== undefined && last.type === "paragraph";
  }

  /**
   * Collect the lines of the list item whose marker is on `lines[i]`. Following lines belong
   * to the item when blank, indented at least `marker.contentIndent`, or lazy paragraph
   * continuations. An item that starts with a blank line ends at a second blank line.
   * Trailing blank lines are left to the caller.
   * @param {string[]} lines
   * @param {number} i
   * @param {ReturnType<typeof matchListMarker>} marker
   * @param {number} depth
   * @returns {{lines: string[], next: number}} the item's lines (relative to its content
   *   column) and the index of the first line not consumed
   */
  collectListItem(lines, i, marker, depth) {
    const itemLines = [marker.content];
    let j = i + 1;
    if (marker.blankStart && j < lines.length && isBlank(lines[j])) return { lines: [], next: j };
    let afterLazy = false;
    while (j < lines.length) {
      const line = lines[j];
      const lazy = !isBlank(line) && leadingSpaces(line) < marker.contentIndent;
      if (!lazy) itemLines.push(isBlank(line) ? stripIndent(line, marker.contentIndent) : line.slice(marker.contentIndent));
      else if (this.isLazyContinuation(itemLines, line, depth, afterLazy)) itemLines.push(line);
      else break;
      afterLazy = lazy;
      j += 1;
    }
    while (itemLines.length > 1 && isBlank(itemLines[itemLines.length - 1])) {
      itemLines.pop();
      j -= 1;
    }
    return { lines: itemLines, next: j };
  }

  /**
   * Parse a list starting at `lines[i]`. Items continue while markers of the same kind
   * (same bullet character, or same ordered delimiter) follow, possibly after blank lines.
   * The list is loose (`tight: false`) when blank lines separate two items, or two direct
   * children of one item.
   * @param {string[]} lines
   * @param {number} i
   * @param {number} depth
   * @returns {{node: object, next: number}}
   */
  parseList(lines, i, depth) {
    const first = matchListMarker(lines[i]);
    const list = createNode("list", {
      ordered: first.ordered, start: first.start, marker: first.marker, tight: true,
    });
    let loose = false;
    let j = i;
    while (j < lines.length) {
      let k = j;
      while (k < lines.length && isBlank(lines[k])) k += 1;
      if (k >= lines.length || isThematicBreak(lines[k])) break;
      const marker = matchListMarker(lines[k]);
      if (marker === null || marker.ordered !== first.ordered || marker.marker !== first.marker) break;
      if (k > j) loose = true;
      const item = this.collectListItem(lines, k, marker, depth);
      const content = this.parseBlocks(item.lines, depth + 1);
      if (content.blankBetween) loose = true;
      list.children.push(createNode("list_item", { children: content.blocks }));
      j = item.next;
    }
    list.tight = !loose;
    return { node: list, next: j };
  }
}
