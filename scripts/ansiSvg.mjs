/**
 * A terminal screen as tmux captures it (`capture-pane -e -p`: text with SGR colour escapes) drawn
 * as an SVG: each run of cells of one style a <text> (and a <rect> for its background), in a
 * monospace font, so the docs show what the editor showed. Wide characters take two cells.
 */
const CELL_W = 8.4;
const CELL_H = 17;
const PALETTE = ['#1e1e1e', '#cd3131', '#0dbc79', '#e5e510', '#2472c8', '#bc3fbc', '#11a8cd', '#e5e5e5', '#666666', '#f14c4c', '#23d18b', '#f5f543', '#3b8eea', '#d670d6', '#29b8db', '#ffffff'];
const DEFAULT = { fg: '#d4d4d4', bg: '#1e1e1e' };

/** xterm's 256 colours. */
function color256(n) {
  if (n < 16) return PALETTE[n];
  if (n >= 232) {
    const level = 8 + (n - 232) * 10;
    return `rgb(${level},${level},${level})`;
  }
  const i = n - 16;
  const step = (v) => (v === 0 ? 0 : 55 + v * 40);
  return `rgb(${step(Math.floor(i / 36))},${step(Math.floor(i / 6) % 6)},${step(i % 6)})`;
}

/** The style after the SGR parameters `codes`. */
function applySgr(style, codes) {
  const next = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code === 0) Object.assign(next, { fg: undefined, bg: undefined, bold: false, reverse: false });
    else if (code === 1) next.bold = true;
    else if (code === 22) next.bold = false;
    else if (code === 7) next.reverse = true;
    else if (code === 27) next.reverse = false;
    else if (code >= 30 && code <= 37) next.fg = PALETTE[code - 30];
    else if (code >= 90 && code <= 97) next.fg = PALETTE[code - 90 + 8];
    else if (code >= 40 && code <= 47) next.bg = PALETTE[code - 40];
    else if (code >= 100 && code <= 107) next.bg = PALETTE[code - 100 + 8];
    else if (code === 39) next.fg = undefined;
    else if (code === 49) next.bg = undefined;
    else if (code === 38 || code === 48) {
      const key = code === 38 ? 'fg' : 'bg';
      if (codes[i + 1] === 5) {
        next[key] = color256(codes[i + 2] ?? 0);
        i += 2;
      } else if (codes[i + 1] === 2) {
        next[key] = `rgb(${codes[i + 2] ?? 0},${codes[i + 3] ?? 0},${codes[i + 4] ?? 0})`;
        i += 4;
      }
    }
  }
  return next;
}

/** A character's cells: two for East Asian wide ones and most emoji. */
function cellsOf(char) {
  const code = char.codePointAt(0);
  return (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xff60) || (code >= 0x1f300 && code <= 0x1faff) ? 2 : 1;
}

const shown = (style) => ({ fg: (style.reverse ? style.bg : style.fg) ?? (style.reverse ? DEFAULT.bg : DEFAULT.fg), bg: (style.reverse ? style.fg : style.bg) ?? (style.reverse ? DEFAULT.fg : DEFAULT.bg) });
const sameBackground = (a, b) => shown(a).bg === shown(b).bg;
const sameLook = (a, b) => shown(a).fg === shown(b).fg && sameBackground(a, b) && Boolean(a.bold) === Boolean(b.bold);
/** A run and what follows it look the same: one text (a blank joins whatever has its background). */
const joins = (run, text, style) => sameLook(run.style, style) || (sameBackground(run.style, style) && (!text.trim() || !run.text.trim()));

/** Each line of the screen as runs of one style: {column, text, cells, style}. */
export function parseScreen(captured) {
  let style = {};
  return captured.replace(/\n$/, '').split('\n').map((line) => {
    const runs = [];
    let column = 0;
    for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
      const sgr = /^\x1b\[([0-9;]*)m$/.exec(part);
      if (sgr) {
        style = applySgr(style, sgr[1] === '' ? [0] : sgr[1].split(';').map(Number));
        continue;
      }
      const text = part.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
      if (!text) continue;
      const cells = [...text].reduce((sum, char) => sum + cellsOf(char), 0);
      const last = runs.at(-1);
      // An editor restyles word by word: runs that look the same are one.
      if (last && joins(last, text, style)) {
        // A blank shows only its background: the text's style is what shows.
        if (!last.text.trim()) last.style = style;
        Object.assign(last, { text: last.text + text, cells: last.cells + cells });
      }
      else runs.push({ column, text, cells, style });
      column += cells;
    }
    return runs;
  });
}

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The SVG of a captured screen, titled `title` (its accessible name). */
export function screenToSvg(captured, title) {
  const lines = parseScreen(captured);
  const columns = Math.max(80, ...lines.map((runs) => runs.reduce((end, run) => Math.max(end, run.column + run.cells), 0)));
  const width = Math.ceil(columns * CELL_W + 16);
  const height = Math.ceil(lines.length * CELL_H + 16);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escape(title)}">`, `<title>${escape(title)}</title>`, `<rect width="100%" height="100%" rx="6" fill="${DEFAULT.bg}"/>`, `<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14" xml:space="preserve">`];
  lines.forEach((runs, row) => {
    const y = 8 + row * CELL_H;
    for (const { column, text, cells, style } of runs) {
      const fg = style.reverse ? (style.bg ?? DEFAULT.bg) : (style.fg ?? DEFAULT.fg);
      const bg = style.reverse ? (style.fg ?? DEFAULT.fg) : style.bg;
      const x = 8 + column * CELL_W;
      if (bg) out.push(`<rect x="${x.toFixed(1)}" y="${y}" width="${(cells * CELL_W).toFixed(1)}" height="${CELL_H}" fill="${bg}"/>`);
      if (text.trim()) out.push(`<text x="${x.toFixed(1)}" y="${y + 13}" fill="${fg}"${style.bold ? ' font-weight="bold"' : ''} textLength="${(cells * CELL_W).toFixed(1)}" lengthAdjust="spacingAndGlyphs">${escape(text)}</text>`);
    }
  });
  out.push('</g>', '</svg>');
  return `${out.join('\n')}\n`;
}
