/**
 * Text from agents and coordinators, made safe to show in any editor. Three kinds of output:
 *
 * - `oneLine` for one-line places (showMessage, progress, code-action titles, diagnostics): no
 *   control characters, no terminal escapes, no line breaks, shortened at a grapheme boundary;
 * - `inert` for multi-line places (answer documents, hover, the log): line breaks and tabs stay,
 *   every other control character, bidi override and invisible format character is shown as a
 *   visible stand-in (`␛`, `<U+202E>`), so nothing is interpreted or hidden;
 * - `wellFormed` for everything the server sends: no lone surrogate ever reaches the wire
 *   (serde_json — Helix, Zed — and Neovim 0.7.2 reject the whole message).
 *
 * `shorten` is the one place text is cut: never inside a grapheme (an emoji, a flag, a letter
 * with its accents), widths counted as a terminal shows them (wide characters take two cells).
 */

/** Terminal escape sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`), and two-byte ESC x. */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])|\u009b[0-?]*[ -/]*[@-~]/g;
/**
 * Invisible format characters that can reorder or hide text: bidi embeddings, overrides and
 * isolates, marks, zero-width space and joiners that join nothing, word joiner, BOM, soft hyphen.
 * ZWJ (U+200D) and ZWNJ (U+200C) stay: emoji sequences and some scripts need them.
 */
const INVISIBLE = '\u00ad\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff';
/** Unicode tag characters outside an emoji tag sequence (🏴 + tags): a way to smuggle hidden text. */
const TAGS = '(?<!\\u{1F3F4}[\\u{E0020}-\\u{E007E}]*)[\\u{E0000}-\\u{E007F}]';
/** Everything that is replaced in inert text (tab and newline are kept). */
const UNSAFE_INERT = new RegExp(`\\r\\n?|[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${INVISIBLE}]|${TAGS}`, 'gu');
/** Everything that is replaced in one-line text. */
const UNSAFE_INLINE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}]|${TAGS}`, 'gu');
/** Anything at all to make safe (most text has nothing: it is returned as it is, cheaply). */
const ANY_UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}\\u{E0000}-\\u{E007F}]`, 'u');

/** A visible, inert stand-in for an unsafe character. */
function standIn(char: string): string {
  const code = char.codePointAt(0)!;
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␀ … ␟ (␛ for ESC)
  if (code === 0x7f) return '\u2421'; // ␡
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * Multi-line text shown as written: line breaks and tabs stay; terminal escapes, other control
 * characters and invisible format characters become visible stand-ins; lone surrogates become
 * U+FFFD.
 */
export function inert(text: string): string {
  if (!ANY_UNSAFE.test(text)) return text.isWellFormed() ? text : text.toWellFormed();
  const shown = text.replace(UNSAFE_INERT, (char) => (char === '\r\n' ? '\n' : standIn(char)));
  return shown.isWellFormed() ? shown : shown.toWellFormed();
}

/**
 * One line: terminal escapes dropped (they are formatting), line breaks and tabs as spaces,
 * other control and invisible characters as visible stand-ins, runs of spaces collapsed.
 */
export function inline(text: string): string {
  if (!ANY_UNSAFE.test(text) && !/\s\s|^\s|\s$|[^\S ]/.test(text)) return text.isWellFormed() ? text : text.toWellFormed();
  const plain = text
    .replace(ANSI, '')
    .replace(UNSAFE_INLINE, (char) => (char === '\n' || char === '\r' || char === '\t' || char === '\u000b' || char === '\u000c' ? ' ' : standIn(char)))
    .replace(/\s+/g, ' ')
    .trim();
  return plain.isWellFormed() ? plain : plain.toWellFormed();
}

/**
 * Text from outside (a file's name, an agent's command) as one CommonMark code span: on one line,
 * inert, fenced by more backticks than any run of them in it — a backtick in it can neither end
 * the span early, letting the rest be read as markdown (a link, a heading), nor be taken for
 * formatting and dropped from what is shown (`echo \`date\`` shown as "echo date").
 */
export function codeSpan(text: string): string {
  const line = inline(text);
  // A loop, not Math.max(...runs): an agent's command can hold more runs than a call takes arguments.
  let longest = 0;
  for (const run of line.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  const fence = '`'.repeat(longest + 1);
  // A space each side keeps a backtick at either end from joining the fence (CommonMark strips one).
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${line}${pad}${fence}`;
}

/**
 * Text as a markdown code block, fenced by more backticks than any run of three or more in it: a
 * README's own ``` in a diff or a file cannot close the block and turn the rest into markdown.
 */
export function codeBlock(text: string, language = ''): string {
  let longest = 2;
  for (const match of text.matchAll(/`{3,}/g)) longest = Math.max(longest, match[0].length);
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${language}\n${text}${text.endsWith('\n') ? '' : '\n'}${ticks}`;
}

let graphemes: Intl.Segmenter | undefined;

/** Terminal cells a grapheme takes: two for wide (CJK, emoji) ones, else one. */
function cells(grapheme: string): number {
  const code = grapheme.codePointAt(0)!;
  if (code < 0x1100) return 1;
  const wide =
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f000 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd) ||
    /\p{Extended_Pictographic}/u.test(grapheme) && grapheme.includes('\ufe0f');
  return wide ? 2 : 1;
}

/** Graphemes are read in windows of this many UTF-16 units (see `graphemesOf`). */
const SEGMENT_WINDOW = 4096;

/**
 * The graphemes of `text` with their offsets, in time linear in its length. V8's Intl.Segmenter
 * costs time proportional to the whole string at every step (a 600 KB answer took minutes), so
 * it is given windows. Every boundary inside a window is a true one (the rules look only at what
 * precedes a boundary and the code point after it), so only the grapheme that touches the window's
 * end may be cut: it is read again, whole, at the start of the next window.
 */
export function* graphemesOf(text: string): Generator<{ segment: string; index: number }> {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + SEGMENT_WINDOW);
    // Never between the halves of a surrogate pair: a lone half would read as a grapheme of its own.
    if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
    let next = end;
    for (const { segment, index } of graphemes.segment(text.slice(start, end))) {
      // The window's last grapheme may go on past it: read it again in the next window (unless it is the whole window).
      if (end < text.length && index > 0 && start + index + segment.length === end) {
        next = start + index;
        break;
      }
      yield { segment, index: start + index };
    }
    start = next;
  }
}

/** How many terminal cells `text` takes. */
export function width(text: string): number {
  // Printable ASCII: one cell a character, and no grapheme joins two of them.
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let cellsTaken = 0;
  for (const { segment } of graphemesOf(text)) cellsTaken += cells(segment);
  return cellsTaken;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * `text` in at most `max` terminal cells, cut at a grapheme boundary with "…" when it is longer.
 * Never leaves half a surrogate pair, half a flag or an emoji without its modifiers.
 */
export function shorten(text: string, max: number): string {
  // Every grapheme takes at least one UTF-16 unit and at most two cells.
  if (text.length * 2 <= max) return text;
  let width = 0;
  let fits = 0; // UTF-16 length of the longest prefix that leaves room for "…"
  for (const { segment, index } of graphemesOf(text)) {
    width += cells(segment);
    if (width > max) return `${text.slice(0, fits)}…`;
    if (width <= max - 1) fits = index + segment.length;
  }
  return text;
}

/**
 * `shorten`, cut at a word boundary where one is near enough (in the second half of the room): a
 * name or a title reads "Modifying critical…", not "Modifying critical configurat…".
 */
export function shortenAtWord(text: string, max: number): string {
  const cut = shorten(text, max);
  if (cut === text) return text;
  const kept = cut.slice(0, -1);
  const space = kept.search(/\s\S*$/);
  return space >= kept.length / 2 ? `${kept.slice(0, space).trimEnd()}…` : cut;
}

/**
 * The end of `text` as one line of at most `max` cells, "…" first when something was left out:
 * the latest words of an answer being written. Reads only the last few hundred characters.
 */
export function lastLine(text: string, max: number): string {
  const whole = text.length <= 4 * max;
  const plain = inline(whole ? text : text.slice(-4 * max));
  const pieces = [...graphemesOf(plain)].map((g) => g.segment);
  let taken = 0;
  let from = pieces.length;
  while (from > 0 && taken + cells(pieces[from - 1]!) <= max - 1) taken += cells(pieces[--from]!);
  return from === 0 && whole ? plain : `…${pieces.slice(from).join('').trimStart()}`;
}

/** One line of at most `max` cells: `inline`, then `shorten`. */
export function oneLine(text: string, max: number): string {
  return shorten(inline(text), max);
}

/**
 * `value` with every string well-formed (lone surrogates as U+FFFD). Copies only what it must:
 * a message without a lone surrogate is returned as it is.
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === 'string') return (value.isWellFormed() ? value : value.toWellFormed()) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const fixed = wellFormed(item);
      if (fixed !== item) (copy ??= [...value])[index] = fixed;
    });
    return (copy ?? value) as T;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const fixed = wellFormed(item);
    const fixedKey = wellFormed(key);
    if (fixed !== item || fixedKey !== key) {
      copy ??= { ...(value as Record<string, unknown>) };
      if (fixedKey !== key) delete copy[key];
      copy[fixedKey] = fixed;
    }
  }
  return (copy ?? value) as T;
}

/** 1500 → "1.5 s", 180000 → "180 s". */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (text.length * 3 <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** The longest suffix of `text` that fits in `maxBytes` of UTF-8, never splitting a character. */
export function utf8Suffix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  let start = Math.max(0, text.length - maxBytes);
  let excess = utf8Length(text.slice(start)) - maxBytes;
  while (excess > 0) {
    // Each UTF-16 unit encodes to at most 3 bytes, so dropping this many never overshoots by much.
    start += Math.max(1, Math.ceil(excess / 3));
    excess = utf8Length(text.slice(start)) - maxBytes;
  }
  if (isLowSurrogate(text.charCodeAt(start))) start += 1;
  return text.slice(start);
}

export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** "lines 3-7" as a person counts them: 1-based, and a range ending at column 0 ends the line before. */
export function describeLines(range: { start: { line: number }; end: { line: number; character: number } }): string {
  const first = range.start.line + 1;
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return first === last ? `line ${first}` : `lines ${first}-${last}`;
}

/**
 * Lines `line` (1-based) to `line + limit - 1` of `text`, with their line ends, as ACP's
 * fs/read_text_file reads them; 0 (or absent) for either: from the start, to the end.
 */
export function selectLines(text: string, line = 0, limit = 0): string {
  if (line <= 1 && limit <= 0) return text;
  let start = 0;
  for (let n = 1; n < line && start <= text.length; n++) {
    const end = text.indexOf('\n', start);
    if (end < 0) return '';
    start = end + 1;
  }
  if (limit <= 0) return text.slice(start);
  let end = start;
  for (let n = 0; n < limit; n++) {
    const next = text.indexOf('\n', end);
    if (next < 0) return text.slice(start);
    end = next + 1;
  }
  return text.slice(start, end);
}
