/**
 * The docs' pictures (scripts/ansiSvg.mjs): a screen tmux captured with its colours, drawn as SVG —
 * the text where it was, in the colours it had, escaped; wide characters two cells.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a script of the project's, in plain JavaScript
import { parseScreen, screenToSvg } from '../../scripts/ansiSvg.mjs';

describe('a captured screen as SVG', () => {
  it('keeps each run of text at its column, in its colours', () => {
    const [line] = parseScreen('\x1b[31mred\x1b[0m plain \x1b[38;5;21;48;2;1;2;3mblue\x1b[m\n');
    expect(line).toEqual([
      { column: 0, text: 'red', cells: 3, style: expect.objectContaining({ fg: '#cd3131' }) },
      { column: 3, text: ' plain ', cells: 7, style: expect.objectContaining({ fg: undefined }) },
      { column: 10, text: 'blue', cells: 4, style: expect.objectContaining({ fg: 'rgb(0,0,255)', bg: 'rgb(1,2,3)' }) },
    ]);
  });

  it('draws text an editor restyled word by word as one run', () => {
    const [line] = parseScreen('\x1b[38;2;9;9;9m//\x1b[0m \x1b[38;2;9;9;9mA small\x1b[39m \x1b[41m!\x1b[0m');
    expect(line!.map((run: { text: string }) => run.text)).toEqual(['// A small ', '!']);
  });

  it('counts a wide character as two cells', () => {
    const [line] = parseScreen('界x');
    expect(line).toEqual([{ column: 0, text: '界x', cells: 3, style: {} }]);
  });

  it('escapes what the screen showed, and names the picture', () => {
    const svg = screenToSvg('if (a < b && c > d)\n\x1b[7mselected\x1b[27m\n', 'Helix: <an answer>');
    expect(svg).toContain('>if (a &lt; b &amp;&amp; c &gt; d)</text>');
    expect(svg).toContain('<title>Helix: &lt;an answer&gt;</title>');
    // Reversed: the text in the background's colour, on the foreground's.
    expect(svg).toMatch(/<rect x="8.0" y="25" width="67.2" height="17" fill="#d4d4d4"\/>\n<text x="8.0" y="38" fill="#1e1e1e"[^>]*>selected<\/text>/);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });
});
