/**
 * Emphasis, strong emphasis and strikethrough: classification of delimiter runs (`*`, `_`,
 * `~`) by the flanking rules, and the delimiter-stack algorithm that pairs openers with
 * closers and wraps the nodes between them.
 * @module inlines/delimiters
 */
import { createNode } from "../ast.js";

/**
 * Classify a character for the flanking rules.
 * @param {string} ch a character, or "" for the start/end of the text
 * @returns {"space" | "punct" | "other"} "space" for Unicode whitespace and "", "punct" for
 *   Unicode punctuation and symbols (categories P and S), "other" otherwise
 */
export function charKind(ch) {
  if (ch === "" || /^\s$/u.test(ch)) return "space";
  if (/^[\p{P}\p{S}]$/u.test(ch)) return "punct";
  return "other";
}

/**
 * Decide whether a delimiter run can open and/or close emphasis, given the characters just
 * before and after it. A run is left-flanking when the next character is not whitespace and
 * either is not punctuation or is preceded by whitespace/punctuation; right-flanking is the
 * mirror image. `*` and `~` open when left-flanking and close when right-flanking; `_` opens
 * only if left-flanking and (not right-flanking or preceded by punctuation), and closes only
 * if right-flanking and (not left-flanking or followed by punctuation).
 * @param {string} char the delimiter character
 * @param {string} before character before the run ("" at the start)
 * @param {string} after character after the run ("" at the end)
 * @returns {{canOpen: boolean, canClose: boolean}}
 */
export function delimiterFlags(char, before, after) {
  const b = charKind(before);
  const a = charKind(after);
  const left = a !== "space" && (a !== "punct" || b !== "other");
  const right = b !== "space" && (b !== "punct" || a !== "other");
  if (char === "_") {
    return { canOpen: left && (!right || b === "punct"), canClose: right && (!left || a === "punct") };
  }
  return { canOpen: left, canClose: right };
}

/**
 * Doubly linked list of delimiter records, in source order. Records carry
 * `{char, count, origCount, canOpen, canClose, node}` plus the `prev`/`next` links.
 */
export class DelimiterList {
  /** Create an empty list. */
  constructor() {
    this.head = null;
    this.tail = null;
  }

  /**
   * Append a delimiter record.
   * @param {{char: string, count: number, canOpen: boolean, canClose: boolean, node: object}} record
   * @returns {object} the record, now linked, with `origCount` set to its initial `count`
   */
  push(record) {
    const entry = { ...record, origCount: record.count, prev: this.tail, next: null };
    if (this.tail === null) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    return entry;
  }

  /**
   * Unlink a record from the list.
   * @param {object} entry a record currently in the list
   */
  remove(entry) {
    if (entry.prev === null) this.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === null) this.tail = entry.prev;
    else entry.next.prev = entry.prev;
  }
}

/**
 * Whether an opener may pair with a closer of the same character: tildes need equal run
 * lengths; `*`/`_` runs obey the rule of three.
 */
function canPair(opener, closer) {
  if (closer.char === "~") return opener.count === closer.count;
  // The "rule of three": a run that can both open and close only pairs with another run when
  // their lengths do not sum to a multiple of 3, unless both lengths are multiples of 3.
  if ((opener.canClose || closer.canOpen) && (opener.origCount + closer.origCount) % 3 === 0) {
    return opener.origCount % 3 === 0 && closer.origCount % 3 === 0;
  }
  return true;
}

/**
 * Pair delimiters above `bottom` and wrap the inline nodes between each matched pair.
 *
 * Walks closers left to right; for each, looks back for the nearest compatible opener of the
 * same character (respecting the rule of three, and for `~` requiring equal run lengths).
 * A `*`/`_` match consumes two characters from each side (strong) when both runs have at
 * least two left, otherwise one (emphasis); a `~` match consumes the whole run
 * (strikethrough). Delimiter text nodes that run out of characters are removed from `nodes`.
 * Afterwards every delimiter above `bottom` is removed from `list`; unmatched runs remain as
 * literal text.
 * @param {object[]} nodes the flat inline node array that contains the delimiter text nodes
 * @param {DelimiterList} list
 * @param {object | null} bottom the record below which nothing is touched (null: whole list)
 */
export function processEmphasis(nodes, list, bottom) {
  const openersBottom = new Map();
  let closer = bottom === null ? list.head : bottom.next;
  while (closer !== null) {
    if (!closer.canClose) {
      closer = closer.next;
      continue;
    }
    const key = `${closer.char}${closer.canOpen ? 1 : 0}${closer.origCount % 3}`;
    const limit = openersBottom.has(key) ? openersBottom.get(key) : bottom;
    let opener = closer.prev;
    while (opener !== null && opener !== bottom && opener !== limit) {
      if (opener.char === closer.char && opener.canOpen && canPair(opener, closer)) break;
      opener = opener.prev;
    }
    if (opener === null || opener === bottom || opener === limit) {
      openersBottom.set(key, closer.prev);
      const next = closer.next;
      if (!closer.canOpen) list.remove(closer);
      closer = next;
      continue;
    }
    let used;
    let type;
    if (closer.char === "~") {
      used = closer.count;
      type = "strikethrough";
    } else {
      used = opener.count >= 2 && closer.count >= 2 ? 2 : 1;
      type = used === 2 ? "strong" : "emphasis";
    }
    const start = nodes.indexOf(opener.node) + 1;
    const inner = nodes.splice(start, nodes.indexOf(closer.node) - start);
    nodes.splice(start, 0, createNode(type, { children: inner }));
    opener.count -= used;
    closer.count -= used;
    opener.node.value = opener.node.value.slice(used);
    closer.node.value = closer.node.value.slice(used);
    for (let d = opener.next; d !== closer; d = d.next) list.remove(d);
    if (opener.count === 0) {
      nodes.splice(nodes.indexOf(opener.node), 1);
      list.remove(opener);
    }
    if (closer.count === 0) {
      const next = closer.next;
      nodes.splice(nodes.indexOf(closer.node), 1);
      list.remove(closer);
      closer = next;
    }
  }
  while (list.tail !== null && list.tail !== bottom) list.remove(list.tail);
}
