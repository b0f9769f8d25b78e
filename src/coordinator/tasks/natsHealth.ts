/**
 * Whether the NATS servers of a team can be reached (store.ts's StoreHealth): away when the
 * connection says it lost them (every server of the list tried), or when JetStream, connected,
 * has stopped answering (a cluster that lost its quorum: every request times out); back when the
 * connection is made again, or a request is answered. A replica waits for NATS while it is away —
 * its tasks' records kept here, its callers told — for as long as it is patient; then the tasks it
 * runs fail, and its callers are told to follow them elsewhere.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { StoreHealth } from './store.js';

type Change = 'away' | 'back' | 'lost';

/** How long JetStream's requests may keep failing before it counts as away. */
const STALLED_MS = 2_000;

export interface NatsHealth extends StoreHealth {
  /** The connection is down (a request would only wait for its timeout). */
  disconnected(): boolean;
  /** A request to JetStream went unanswered (connected or not): timed out, or no server took it. */
  failed(error: Error): void;
  /** A request to JetStream was answered. */
  answered(): void;
  close(): void;
}

export function natsHealth(nc: NatsConnection, servers: string[], patienceMs: number): NatsHealth {
  const listeners = new Set<(change: Change) => void>();
  let since: number | undefined;
  let lostTimer: NodeJS.Timeout | undefined;
  let down = false;
  let failingSince: number | undefined;
  const tell = (change: Change) => {
    for (const listener of [...listeners]) listener(change);
  };
  // Away while down or stalled: said once when it goes, once when it is back.
  const settle = () => {
    const away = down || (failingSince !== undefined && Date.now() - failingSince >= STALLED_MS);
    if (away && since === undefined) {
      since = Date.now();
      tell('away');
      lostTimer = setTimeout(() => tell('lost'), patienceMs);
      lostTimer.unref();
    } else if (!away && since !== undefined) {
      since = undefined;
      clearTimeout(lostTimer);
      tell('back');
    }
  };
  let closed = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (closed) return;
      if (status.type === 'disconnect') down = true;
      else if (status.type === 'reconnect') {
        down = false;
        failingSince = undefined;
      } else continue;
      settle();
    }
  })().catch(() => undefined);
  return {
    where: `NATS at ${servers.join(', ')}`,
    patienceMs,
    awaySince: () => since,
    disconnected: () => down,
    failed: (error) => {
      // A request that timed out went unanswered for seconds already.
      failingSince ??= Date.now() - (/timeout/i.test(`${error.name} ${error.message}`) ? STALLED_MS : 0);
      settle();
    },
    answered: () => {
      failingSince = undefined;
      settle();
    },
    watch: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      closed = true;
      clearTimeout(lostTimer);
      listeners.clear();
    },
  };
}
