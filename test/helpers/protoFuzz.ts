/**
 * Messages of the buckley.acp.v1 service made up from the .proto's own descriptors, for the seeded
 * fuzz tests of both sides of the wire: every field of a message filled (or left out) with what
 * `text` and the numbers below give — strings, numbers, lists and maps of every awkward kind.
 */
import * as protoLoader from '@grpc/proto-loader';
import { protoRoot } from '../../src/wire/protos.js';

export interface Descriptor {
  name: string;
  field: { name: string; type: string; label: string; typeName: string }[];
  nestedType?: Descriptor[];
  options?: { mapEntry?: boolean } | null;
}

export interface Method {
  path: string;
  responseStream: boolean;
  requestType: { type: Descriptor };
  responseType: { type: Descriptor };
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): any;
}

export const definition = protoLoader.loadSync('buckley/acp/v1/service.proto', { includeDirs: [protoRoot()], keepCase: true, longs: Number, enums: String, defaults: true, arrays: true, oneofs: true });
/** The service's methods, by name. */
export const service = definition['buckley.acp.v1.AgentCommunication'] as unknown as Record<string, Method>;

/** A message type by the name a field gives it (nested in `parent`, or the package's). */
export function typeOf(name: string, parent?: Descriptor): Descriptor {
  return parent?.nestedType?.find((nested) => nested.name === name) ?? ((definition[`buckley.acp.v1.${name}`] ?? definition[name] ?? definition[`google.protobuf.${name}`]) as { type: Descriptor }).type;
}

/** Makes messages of any type, `random` choosing, `text` giving the strings. */
export function messageMaker(random: () => number, text: () => string): (type: Descriptor) => Record<string, unknown> {
  const numbers = [0, 1, -1, 7, 2 ** 31 - 1, -(2 ** 31), Number.MAX_SAFE_INTEGER, 1e308, Number.NaN, Infinity, 0.5];
  const scalar = (type: string): unknown => {
    if (type === 'TYPE_STRING') return text();
    if (type === 'TYPE_BOOL') return random() < 0.5;
    if (type === 'TYPE_BYTES') return Buffer.from(text());
    const value = numbers[Math.floor(random() * numbers.length)]!;
    return type === 'TYPE_DOUBLE' ? value : Number.isFinite(value) ? Math.trunc(value) : 0;
  };
  const value = (field: Descriptor['field'][number], parent: Descriptor, depth: number): unknown =>
    field.type !== 'TYPE_MESSAGE' ? scalar(field.type) : depth > 3 ? {} : message(typeOf(field.typeName, parent), depth + 1);
  // Thousands of items only of what holds no messages: lists of lists of messages grow past any memory.
  const count = (items: Descriptor['field'][number]) => (items.type !== 'TYPE_MESSAGE' && random() < 0.05 ? 3_000 : Math.floor(random() * 4));
  const message = (type: Descriptor, depth = 0): Record<string, unknown> => {
    const made: Record<string, unknown> = {};
    for (const field of type.field) {
      if (random() < 0.4) continue;
      const nested = field.type === 'TYPE_MESSAGE' ? typeOf(field.typeName, type) : undefined;
      if (nested?.options?.mapEntry) made[field.name] = Object.fromEntries(Array.from({ length: count(nested.field[1]!) }, (_, i) => [`${text()}${i}`, value(nested.field[1]!, nested, depth)]));
      else if (field.label === 'LABEL_REPEATED') made[field.name] = Array.from({ length: count(field) }, () => value(field, type, depth));
      else made[field.name] = value(field, type, depth);
    }
    return made;
  };
  return (type) => message(type);
}
