/** A coordinator's Prometheus metrics (`--metrics`), read as its scraper would. */
import { expect } from 'vitest';
import type { CoordinatorProcess } from './coordinators.js';

/** Where a coordinator started with `--metrics 127.0.0.1:0` serves them, from its log. */
export function metricsAddress(coordinator: CoordinatorProcess): string {
  return /metrics on http:\/\/(127\.0\.0\.1:\d+)\/metrics/.exec(coordinator.said())![1]!;
}

/** The metrics' samples: `name{labels} value` lines, as a map (the replica's label left out). */
export async function scrape(address: string): Promise<Map<string, number>> {
  const response = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(10_000) });
  expect(response.headers.get('content-type')).toContain('text/plain');
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^((?:buckley|process|nodejs)_[a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) samples.set(match[1]!.replace(/,?replica="[^"]*"/, '').replace('{}', ''), Number(match[2]));
  }
  return samples;
}
