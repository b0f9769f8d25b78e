/** Text from agents made safe for editors: one-line, inert, well-formed, cut between graphemes. */
import { describe, expect, it } from 'vitest';
import { codeBlock, codeSpan, graphemesOf, inert, inline, lastLine, oneLine, selectLines, shorten, wellFormed, shortenAtWord, width } from '../../src/text.js';

const FAMILY = '👨‍👩‍👧‍👦'; // one grapheme, 11 UTF-16 units, two cells
const FLAG = '🇫🇷';
const ACCENTED = 'e\u0301'; // é as e + combining acute
/** Where graphemes start and end, in UTF-16 units (the standard's segmentation, via Intl). */
const boundaries = (text: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].map((s) => s.index).concat(text.length);
/** Every UTF-16 unit is paired: no lone surrogate. */
const isWellFormed = (text: string) => text.isWellFormed();
/** Nothing a terminal or a bidi algorithm would act on. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u{E0000}-\u{E007F}]/u;

describe('graphemesOf (long text is read in windows, so it costs linear time)', () => {
  const WINDOW = 4096;
  it.each([
    ['an emoji family', FAMILY],
    ['a flag', FLAG],
    ['an accented letter', ACCENTED],
    ['CR LF', '\r\n'],
    ['a wide character', '日'],
  ])('finds the same graphemes as one Intl pass when %s straddles a window edge', (_name, grapheme) => {
    for (let shift = 0; shift <= grapheme.length + 1; shift++) {
      // `grapheme` repeated so that one of them covers every offset around the window edges.
      const text = `${'x'.repeat(WINDOW - shift)}${grapheme.repeat(3)} ${'y'.repeat(WINDOW)}${grapheme.repeat(2)}`;
      expect([...graphemesOf(text)].map((g) => g.index).concat(text.length)).toEqual(boundaries(text));
    }
  });

  it('passes a grapheme longer than a window on, in pieces, without stalling', () => {
    const huge = `a${'\u0301'.repeat(WINDOW * 2)}b`;
    const pieces = [...graphemesOf(huge)];
    expect(pieces.map((p) => p.segment).join('')).toBe(huge);
  });

  it('gives widths that agree with counting grapheme by grapheme', () => {
    const text = `${'é'.repeat(5000)}${FAMILY}日本${ACCENTED}`.repeat(3);
    const expected = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].reduce((sum, { segment }) => sum + (/[日本]|\u{1F468}/u.test(segment) ? 2 : 1), 0);
    expect(width(text)).toBe(expected);
    expect(width('plain ascii')).toBe(11);
  });
});

describe('shorten', () => {
  it('leaves text that fits alone', () => {
    expect(shorten('short', 10)).toBe('short');
    expect(shorten('exactly ten', 11)).toBe('exactly ten');
  });

  it('cuts with an ellipsis within the width', () => {
    expect(shorten('abcdefghij', 5)).toBe('abcd…');
  });

  it.each([
    ['an emoji family', FAMILY],
    ['a flag', FLAG],
    ['an accented letter', ACCENTED],
    ['an astral character', '𝒳'],
  ])('never cuts inside %s, wherever the cut falls', (_name, grapheme) => {
    for (let prefix = 0; prefix < 8; prefix++) {
      const text = `${'x'.repeat(prefix)}${grapheme}${grapheme}${grapheme} and more text after it`;
      for (let max = 2; max < 16; max++) {
        const cut = shorten(text, max);
        expect(isWellFormed(cut)).toBe(true);
        const kept = cut.endsWith('…') ? cut.slice(0, -1) : cut;
        expect(text.startsWith(kept)).toBe(true);
        expect(boundaries(text)).toContain(kept.length);
      }
    }
  });

  it('counts wide characters as two cells', () => {
    expect(shorten('日本語のテキスト', 7)).toBe('日本語…');
    expect(shorten(`${FAMILY}${FAMILY}${FAMILY}${FAMILY}`, 5)).toBe(`${FAMILY}${FAMILY}…`);
  });
});

describe('inline', () => {
  it('drops terminal escapes and makes other controls visible, on one line', () => {
    expect(inline('red \u001b[31mALERT\u001b[0m\nnext\tline\u0007 \u001b]8;;http://x\u0007link\u001b]8;;\u0007')).toBe('red ALERT next line␇ link');
  });

  it('shows bidi overrides and invisible characters instead of letting them act', () => {
    const shown = inline('invoice\u202Egnp.exe\u202C zero\u200Bwidth');
    expect(shown).toBe('invoice<U+202E>gnp.exe<U+202C> zero<U+200B>width');
    expect(shown).not.toMatch(CONTROL);
  });

  it('shows tag characters that smuggle hidden text, but keeps emoji tag sequences', () => {
    expect(inline('hi\u{E0041}\u{E0042}')).toBe('hi<U+E0041><U+E0042>');
    const scotland = '🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}';
    expect(inline(scotland)).toBe(scotland);
  });

  it('keeps the joiners emoji need', () => {
    expect(inline(FAMILY)).toBe(FAMILY);
  });

  it('replaces a lone surrogate', () => {
    expect(inline('lone\uD800 high')).toBe('lone\uFFFD high');
  });
});

describe('codeSpan (names from outside in our markdown)', () => {
  it('fences plain text with one backtick', () => {
    expect(codeSpan('src/retry.ts')).toBe('`src/retry.ts`');
  });

  it('fences text holding backticks with more of them, so none ends the span or is lost', () => {
    expect(codeSpan('echo `date`')).toBe('`` echo `date` ``');
    expect(codeSpan('a` [approve](https://evil.example) `b.ts')).toBe('``a` [approve](https://evil.example) `b.ts``');
    expect(codeSpan('x ``` y')).toBe('````x ``` y````');
  });

  it('takes a command of any length: one with more runs of backticks than a call takes arguments', () => {
    const command = 'echo `a` '.repeat(200_000);
    expect(codeSpan(command)).toBe(`\`\` ${command.trim()} \`\``);
  });

  it('keeps it on one line: a name with line breaks cannot start a heading or a list', () => {
    expect(codeSpan('a.ts\n\n# Approve all\n- [x] done')).toBe('`a.ts # Approve all - [x] done`');
  });
});

describe('codeBlock', () => {
  it('fences text with three backticks, or more than it holds in a row', () => {
    expect(codeBlock('a = 1', 'py')).toBe('```py\na = 1\n```');
    expect(codeBlock('```sh\nnpm test\n```\n', 'md')).toBe('````md\n```sh\nnpm test\n```\n````');
  });
});

describe('oneLine', () => {
  it('is inline and shortened', () => {
    const line = oneLine(`\u001b[1mBold\u001b[0m question with ${FAMILY} about a very long piece of code`, 30);
    expect(line).not.toMatch(CONTROL);
    expect(isWellFormed(line)).toBe(true);
    expect(line.startsWith('Bold question with')).toBe(true);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('inert', () => {
  it('keeps line breaks and tabs, normalises CRLF, shows a lone CR and every other control', () => {
    expect(inert('a\r\nb\tc\rd\u001b[2Je\u0000f\u007fg\u0085h')).toBe('a\nb\tc␍d␛[2Je␀f␡g<U+0085>h');
  });

  it('shows bidi overrides and tags, and replaces lone surrogates', () => {
    const shown = inert('x\u202Ey\u{E0041}z\uDC00');
    expect(shown).toBe('x<U+202E>y<U+E0041>z\uFFFD');
    expect(isWellFormed(shown)).toBe(true);
  });

  it('is idempotent', () => {
    const once = inert('\u001b[31mred\u202E\r\n');
    expect(inert(once)).toBe(once);
  });
});

describe('wellFormed', () => {
  it('fixes every string in a message and copies only what it must', () => {
    const clean = { a: 'fine', b: ['also fine', { c: 1 }] };
    expect(wellFormed(clean)).toBe(clean);
    const dirty = { a: 'fine', b: ['bad\uD800', { c: 'x\uDFFF' }], ['key\uD801']: true };
    const fixed = wellFormed(dirty);
    expect(fixed).toEqual({ a: 'fine', b: ['bad\uFFFD', { c: 'x\uFFFD' }], ['key\uFFFD']: true });
    expect(JSON.stringify(fixed)).not.toMatch(/\\ud[89a-f]/i);
    expect(dirty.b[0]).toBe('bad\uD800');
  });
});

describe('lastLine (the latest words of an answer being written)', () => {
  it('keeps a short answer whole, on one line', () => {
    expect(lastLine('The list\nis empty.', 40)).toBe('The list is empty.');
  });

  it('shows the end of a long one after "…", within the width and between graphemes', () => {
    const answer = `${'word '.repeat(10_000)}and the end ${FAMILY}${FLAG}.`;
    const shown = lastLine(answer, 30);
    expect(shown.startsWith('…')).toBe(true);
    expect(shown.endsWith(`and the end ${FAMILY}${FLAG}.`)).toBe(true);
    expect(width(shown)).toBeLessThanOrEqual(30);
    expect(isWellFormed(shown)).toBe(true);
  });

  it('shows nothing a terminal would act on', () => {
    expect(lastLine('done \u001b[31mred\u001b[0m \u202eevil', 40)).not.toMatch(CONTROL);
  });
});

describe('selectLines', () => {
  const text = 'one\ntwo\nthree\nfour';
  it('reads 1-based lines with their ends, as ACP fs/read_text_file does', () => {
    expect(selectLines(text)).toBe(text);
    expect(selectLines(text, 1, 1)).toBe('one\n');
    expect(selectLines(text, 2, 2)).toBe('two\nthree\n');
    expect(selectLines(text, 3)).toBe('three\nfour');
    expect(selectLines(text, 0, 2)).toBe('one\ntwo\n');
  });
  it('reads to the end when the limit goes past it, and nothing past the last line', () => {
    expect(selectLines(text, 4, 10)).toBe('four');
    expect(selectLines(text, 5)).toBe('');
    expect(selectLines('one\n', 2)).toBe('');
    expect(selectLines('', 1, 1)).toBe('');
  });
});

describe('shortenAtWord', () => {
  it('cuts at a word boundary near the end of the room, else between graphemes', () => {
    expect(shortenAtWord('Modifying critical configuration file', 30)).toBe('Modifying critical…');
    expect(shortenAtWord('short enough', 30)).toBe('short enough');
    // No space in the second half: cut where the room ends.
    expect(shortenAtWord('a supercalifragilisticexpialidocious word', 20)).toBe('a supercalifragilis…');
  });
});
