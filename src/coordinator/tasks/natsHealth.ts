/**
 * Whether the NATS servers of a team can be reached (store.ts's StoreHealth), from the
 * connection's own news: it went away (every server of the list tried), it came back. A replica
 * waits for NATS while it is away — its tasks' records kept here, its callers told — for as long
 * as it is patient; then the tasks it runs fail, and its callers are told to follow them elsewhere.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { StoreHealth } from './store.js';

type Change = 'away' | 'back' | 'lost';

export function natsHealth(nc: NatsConnection, servers: string[], patienceMs: number): StoreHealth & { close(): void } {
  const listeners = new Set<(change: Change) => void>();
  let since: number | undefined;
  let lostTimer: NodeJS.Timeout | undefined;
  const tell = (change: Change) => {
    for (const listener of [...listeners]) listener(change);
  };
  const away = () => {
    if (since !== undefined) return;
    since = Date.now();
    tell('away');
    lostTimer = setTimeout(() => tell('lost'), patienceMs);
    lostTimer.unref();
  };
  const back = () => {
    if (since === undefined) return;
    since = undefined;
    clearTimeout(lostTimer);
    tell('back');
  };
  let closed = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (closed) return;
      if (status.type === 'disconnect') away();
      else if (status.type === 'reconnect') back();
    }
  })().catch(() => undefined);
  return {
    where: `NATS at ${servers.join(', ')}`,
    patienceMs,
    awaySince: () => since,
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
