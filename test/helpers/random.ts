/** A small seeded PRNG (mulberry32), so a failing fuzz run can be replayed from its seed. */
export function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of `items`, as `random` picks. */
export function pickWith(random: () => number): <T>(items: readonly T[]) => T {
  return (items) => items[Math.floor(random() * items.length)]!;
}
