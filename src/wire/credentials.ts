/**
 * Channel credentials for the coordinator address: plaintext only to loopback, TLS (and mutual
 * TLS with a client certificate) otherwise. A non-loopback address without TLS settings is
 * refused before any connection is attempted.
 */
import { PEM_MAX_BYTES, readFileBounded, unreadableWhy } from '../fileAccess.js';
import * as grpc from '@grpc/grpc-js';
import type { Config } from '../config.js';
import { isLoopbackHost } from '../net.js';
import { FailedError } from '../errors.js';

export interface ChannelSetup {
  credentials: grpc.ChannelCredentials;
  options: grpc.ChannelOptions;
  secure: boolean;
}

export function hostOf(address: string): string {
  return address.slice(0, address.lastIndexOf(':'));
}

export function channelFor(address: string, tls: NonNullable<Config['coordinator']['tls']> | undefined): ChannelSetup {
  if (!tls) {
    if (!isLoopbackHost(hostOf(address))) {
      throw new FailedError(
        `refusing to talk to the coordinator at ${address} without TLS: plaintext is only allowed to loopback addresses. ` +
          'Set buckley.coordinator.tls.ca (and tls.cert + tls.key for mutual TLS, as Buckley requires) to the PEM files.',
        `set buckley.coordinator.tls for ${hostOf(address)}`,
      );
    }
    return { credentials: grpc.credentials.createInsecure(), options: {}, secure: false };
  }
  const read = (key: 'ca' | 'cert' | 'key') => {
    const path = tls[key];
    if (!path) return null;
    try {
      return readFileBounded(path, PEM_MAX_BYTES);
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      throw new FailedError(
        `cannot read buckley.coordinator.tls.${key} (${path}): ${unreadableWhy(error)}; give the path of a PEM file`,
        `buckley.coordinator.tls.${key}: ${missing ? 'no such file' : 'cannot read it'}`,
      );
    }
  };
  return {
    credentials: grpc.credentials.createSsl(read('ca'), read('key'), read('cert')),
    options: tls.serverName ? { 'grpc.ssl_target_name_override': tls.serverName, 'grpc.default_authority': tls.serverName } : {},
    secure: true,
  };
}
