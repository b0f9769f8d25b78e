/**
 * Loads the buckley.acp.v1 definitions from the shipped .proto files. They are found from this
 * module's own location (bundlers break runtime proto paths): `proto/` is beside `dist/` in
 * the package and two levels above `src/coordinator/` in the repository.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const SERVICE_FILE = 'buckley/acp/v1/service.proto';

export function protoRoot(): string {
  const candidates = ['../proto/', '../../proto/', './proto/'];
  for (const candidate of candidates) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(dir + SERVICE_FILE)) return dir;
  }
  throw new Error(`cannot find ${SERVICE_FILE} near ${fileURLToPath(import.meta.url)}; the package is incomplete`);
}

let cached: grpc.ServiceClientConstructor | undefined;

/** The generated client constructor; its `.service` is the definition servers implement. */
export function agentCommunicationService(): grpc.ServiceClientConstructor {
  if (cached) return cached;
  const definition = protoLoader.loadSync(SERVICE_FILE, {
    includeDirs: [protoRoot()],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    arrays: true,
    objects: false,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    buckley: { acp: { v1: { AgentCommunication: grpc.ServiceClientConstructor } } };
  };
  cached = loaded.buckley.acp.v1.AgentCommunication;
  return cached;
}

export const SERVICE_NAME = 'buckley.acp.v1.AgentCommunication';
