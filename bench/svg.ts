import { pct, median } from './kit.js';
/** The benchmark's two pictures: an ask's latency distribution and a streaming timeline. */
export function histogramSvg(series: Record<string, number[]>): string {
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd'];
  const all = Object.values(series).flat();
  const max = pct(all, 99) * 1.2;
  const bins = 40;
  const width = 640;
  const height = 300;
  const bars = Object.entries(series).map(([name, values], index) => {
    const counts = new Array(bins).fill(0);
    for (const value of values) counts[Math.min(bins - 1, Math.floor((value / max) * bins))]++;
    const top = Math.max(...counts);
    const points = counts.map((count, i) => `${40 + (i / bins) * (width - 60)},${height - 30 - (count / top) * (height - 60)}`).join(' ');
    return `<polyline fill="none" stroke="${colors[index]}" stroke-width="2" points="${points}"/><text x="${width - 200}" y="${20 + index * 16}" fill="${colors[index]}" font-size="12">${name} (p50 ${median(values).toFixed(2)} ms)</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="10" y="16" font-size="13">Round-trip latency distribution (ms, 0–${max.toFixed(1)})</text><line x1="40" y1="${height - 30}" x2="${width - 20}" y2="${height - 30}" stroke="#999"/>${bars.join('')}<text x="40" y="${height - 10}" font-size="11">0 ms</text><text x="${width - 80}" y="${height - 10}" font-size="11">${max.toFixed(1)} ms</text></svg>\n`;
}

export function timelineSvg(timeline: number[], seconds: number): string {
  const width = 640;
  const height = 200;
  const end = Math.max(seconds * 1000, ...timeline, 1);
  const ticks = timeline.map((t) => `<line x1="${40 + (t / end) * (width - 60)}" y1="40" x2="${40 + (t / end) * (width - 60)}" y2="${height - 40}" stroke="#1f77b4" stroke-opacity="0.6"/>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="10" y="16" font-size="13">Streaming: notifications sent to the editor over ${end.toFixed(0)} ms (${timeline.length} in all)</text>${ticks.join('')}<line x1="40" y1="${height - 40}" x2="${width - 20}" y2="${height - 40}" stroke="#999"/><text x="40" y="${height - 20}" font-size="11">0</text><text x="${width - 80}" y="${height - 20}" font-size="11">${end.toFixed(0)} ms</text></svg>\n`;
}

/**
 * Hostile agents: the bridge's memory while an agent holds 1,000 permissions open at once (asked
 * one at a time, the rest waiting), against the same server idle; and hover while a 20 MB answer
 * streams in, against hover with nothing running.
 */
