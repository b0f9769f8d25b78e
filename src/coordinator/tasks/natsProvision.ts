/**
 * What a team keeps in NATS, made by whichever replica comes first (nats.ts): the tasks' streams,
 * the work queue and its consumer, the states' bucket and the blobs' object store. Made before
 * with fewer copies than a replica now asks for (a team that grew from one NATS server to a
 * cluster), they are given more — else losing the one node that holds them would lose the team's
 * tasks, and nothing would have said so. Never fewer: a replica that asks for less (it was given
 * one server of the cluster) does not take copies away.
 */
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { Logger } from '../../logger.js';
import { TASKS } from './natsLog.js';

export const WORK = 'BUCKLEY_WORK';
export const WORKERS = 'workers';
const BUCKET = 'buckley_tasks';
const BLOBS = 'buckley_blobs';
/** The names of the replicas running (natsPresence.ts). */
const NAMES = 'buckley_replicas';
/** How long tasks are kept: their streams, states and blobs. */
const KEPT_MS = 7 * 24 * 3600_000;

type StreamConfig = Parameters<JetStreamManager['streams']['add']>[0];

/** Makes what is not there yet, with `replicas` copies (more where fewer were made); the bucket and the object store. */
export async function provision(nc: NatsConnection, jsm: JetStreamManager, replicas: number, leaseMs: number, logger?: Logger): Promise<{ kv: KV; blobs: ObjectStore; names: KV }> {
  await ensure(jsm, { name: TASKS, subjects: ['buckley.tasks.*'], storage: StorageType.File, num_replicas: replicas, max_age: nanos(KEPT_MS), duplicate_window: nanos(5 * 60_000), allow_direct: true });
  await ensure(jsm, { name: WORK, subjects: ['buckley.work'], storage: StorageType.File, num_replicas: replicas, retention: RetentionPolicy.Workqueue });
  try {
    await jsm.consumers.info(WORK, WORKERS);
  } catch {
    await jsm.consumers.add(WORK, { durable_name: WORKERS, ack_policy: AckPolicy.Explicit, ack_wait: nanos(leaseMs), max_deliver: -1 }).catch(() => undefined);
  }
  const kept = { replicas, ttl: KEPT_MS };
  const kv = await new Kvm(nc).create(BUCKET, { ...kept, history: 1 });
  const blobs = await new Objm(nc).create(BLOBS, { ...kept, ttl: nanos(KEPT_MS) });
  const names = await new Kvm(nc).create(NAMES, { replicas, history: 1, ttl: 3600_000 });
  for (const name of [TASKS, WORK, `KV_${BUCKET}`, `OBJ_${BLOBS}`, `KV_${NAMES}`]) await keepCopies(jsm, name, replicas, logger);
  return { kv, blobs, names };
}

/** The stream, made where it is not there yet (another replica may make it meanwhile), or brought to what this version reads. */
async function ensure(jsm: JetStreamManager, config: StreamConfig & { name: string }): Promise<void> {
  const info = await jsm.streams.info(config.name).catch(() => undefined);
  if (!info) {
    await jsm.streams.add(config).catch(async (error: unknown) => {
      // Another replica made it meanwhile.
      await jsm.streams.info(config.name).catch(() => Promise.reject(error));
    });
  } else if (config.allow_direct && !info.config.allow_direct) {
    // Made by an earlier version: its records are read with direct gets now.
    await jsm.streams.update(config.name, { ...info.config, allow_direct: true });
  }
}

/** At least `replicas` copies of the stream; where NATS cannot keep them (too few nodes), said, and the team goes on with what it has. */
async function keepCopies(jsm: JetStreamManager, name: string, replicas: number, logger?: Logger): Promise<void> {
  const info = await jsm.streams.info(name);
  const copies = info.config.num_replicas ?? 1;
  if (copies >= replicas) return;
  try {
    await jsm.streams.update(name, { ...info.config, num_replicas: replicas });
    logger?.info(`${name} was kept in ${copies} ${copies === 1 ? 'copy' : 'copies'}: now in ${replicas}`);
  } catch (error) {
    logger?.warn(`${name} is kept in ${copies} ${copies === 1 ? 'copy' : 'copies'}, and NATS would not keep ${replicas} (${(error as Error).message}): losing the node that holds it loses it`);
  }
}
