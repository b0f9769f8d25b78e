/**
 * One running replica of each name in a team (`--replica`; hostname:pid by default, which two
 * containers sharing their host's network and name can both have). A task's holder is known by
 * its replica's name (hold.ts): a replica takes a task held under its own name as its own, left
 * by its previous run — with two of one name, one would take the other's running tasks.
 *
 * So a replica holds its name in the team's `buckley_replicas` bucket while it runs, beating every
 * BEAT_MS. Starting, it finds its name free, or held by a run that no longer beats (it died
 * without saying so: taken once it has missed SILENT_BEATS beats), or held by one that beats: then
 * it does not start, and says which host and process has it. Stopping, it lets the name go.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KV } from '@nats-io/kv';
import type { Logger } from '../../logger.js';

const BEAT_MS = 2_000;
/** How many beats a holder of the name may miss before it is taken as gone. */
const SILENT_BEATS = 3;

interface Holder {
  instance: string;
  host: string;
  pid: number;
}

const keyOf = (name: string) => Buffer.from(name).toString('base64url') || '_';
const holderIn = (bytes: Uint8Array): Holder | undefined => {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Holder>;
    return typeof value.instance === 'string' ? { instance: value.instance, host: String(value.host), pid: Number(value.pid) } : undefined;
  } catch {
    return undefined;
  }
};

/** Holds `name` for this process until `release()`; throws, in words, where a running replica has it. */
export async function holdName(kv: KV, name: string, logger?: Logger, beatMs = BEAT_MS): Promise<{ release(): Promise<void> }> {
  const key = keyOf(name);
  const me: Holder = { instance: randomBytes(6).toString('hex'), host: hostname(), pid: process.pid };
  const value = JSON.stringify(me);
  let revision = await take(kv, key, name, value, beatMs, logger);
  const beat = setInterval(() => {
    kv.update(key, value, revision).then(
      (next) => (revision = next),
      async (error: Error) => {
        if (!/wrong last sequence/i.test(error.message)) return; // NATS away: beaten again when it is back.
        const entry = await kv.get(key).catch(() => null);
        const other = entry?.operation === 'PUT' ? holderIn(entry.value) : undefined;
        if (other && other.instance !== me.instance) logger?.error(`the replica name ${name} was taken by another coordinator (process ${other.pid} on ${other.host}) while this one could not reach NATS: give each replica its own --replica`);
        else if (entry) revision = entry.revision;
      },
    );
  }, beatMs);
  beat.unref();
  return {
    release: async () => {
      clearInterval(beat);
      // NATS away: not waited for (the name is taken once it has been silent long enough).
      await Promise.race([kv.delete(key, { previousSeq: revision }).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    },
  };
}

/** The name's entry, made this process's: its revision. */
async function take(kv: KV, key: string, name: string, value: string, beatMs: number, logger?: Logger): Promise<number> {
  let seen: { revision: number; since: number } | undefined;
  let beats = 0;
  for (;;) {
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT') {
      // Made by another meanwhile: looked at again. Refused otherwise: said, not asked again at once for ever.
      const made = await kv.create(key, value).catch((error: Error) => (/wrong last sequence|exists/i.test(error.message) ? undefined : Promise.reject(error)));
      if (made !== undefined) return made;
      continue;
    }
    const other = holderIn(entry.value);
    if (!seen || seen.revision !== entry.revision) {
      // It beat since it was last seen: a replica of this name is running.
      if (seen && ++beats >= 2) throw new Error(`the replica name ${name} is in use by a coordinator that is running (process ${other?.pid} on ${other?.host}): give each replica its own --replica`);
      if (!seen) logger?.info(`replica name ${name} was held by process ${other?.pid} on ${other?.host}: taken once it has been silent for ${(SILENT_BEATS * beatMs) / 1000} s`);
      seen = { revision: entry.revision, since: Date.now() };
    } else if (Date.now() - seen.since >= SILENT_BEATS * beatMs) {
      const taken = await kv.update(key, value, entry.revision).catch(() => undefined);
      if (taken !== undefined) return taken;
    }
    await new Promise((resolve) => setTimeout(resolve, beatMs / 2));
  }
}
