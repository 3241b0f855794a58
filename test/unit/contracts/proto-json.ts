import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';

/**
 * The official T-Invest contracts (test/contracts/tbank/, release 1.43) read with protobufjs, and a
 * checker of JSON bodies against a message under the proto3 JSON mapping
 * (protobuf.dev/programming-guides/json): lowerCamelCase names, enums by name, 64-bit integers as
 * strings, Timestamps as RFC 3339 text, no field the message lacks. Every value checked is counted.
 */

export const CONTRACTS = path.join(__dirname, '..', '..', 'contracts', 'tbank');
export const PACKAGE = 'tinkoff.public.invest.api.contract.v1';

export function loadContracts(files = ['users.proto', 'operations.proto', 'instruments.proto']): protobuf.Root {
  const root = new protobuf.Root();
  const bundled = path.dirname(require.resolve('protobufjs/package.json'));
  // Imports resolve against the vendored tree first (google/api/…), then protobufjs's own google/protobuf/….
  root.resolvePath = (_origin, target) =>
    [CONTRACTS, bundled].map((base) => path.join(base, target)).find((p) => fs.existsSync(p)) ?? target;
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  return root;
}

/** The JSON name protoc gives a field (json_name, else the snake_case name in lowerCamelCase). */
export function jsonName(field: protobuf.Field): string {
  const explicit = field.options?.json_name as string | undefined;
  if (explicit) return explicit;
  let out = '';
  let upper = false;
  for (const ch of field.name) {
    if (ch === '_') upper = true;
    else {
      out += upper ? ch.toUpperCase() : ch;
      upper = false;
    }
  }
  return out;
}

export const isRequired = (field: protobuf.Field) => field.options?.['(google.api.field_behavior)'] === 'REQUIRED';

export interface Tally {
  /** Values checked (each field value, each list element). */
  checks: number;
  mismatches: string[];
  /** `Message.field` of every field met at least once. */
  fields: Set<string>;
  /** Enum values outside the contract that are there on purpose (enum name → values), and how many were met. */
  deliberate: { allowed: Map<string, Set<string>>; met: number };
}
export const tally = (allowed = new Map<string, Set<string>>()): Tally => ({
  checks: 0,
  mismatches: [],
  fields: new Set(),
  deliberate: { allowed, met: 0 },
});

/** `answer`: what the gateway emits (Timestamps in Z); `request`: what it accepts (any RFC 3339 offset). */
export type Direction = 'answer' | 'request';

const TIMESTAMP = {
  answer: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$/,
  request: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/,
};
const INT64 = /^-?(0|[1-9]\d{0,18})$/;
const UINT64 = /^(0|[1-9]\d{0,19})$/;
const INT32_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
};

/** Checks `value` as a JSON `type` message; mismatches are added to `t` with their path. */
export function checkMessage(type: protobuf.Type, value: unknown, where: string, t: Tally, dir: Direction): void {
  t.checks++;
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    t.mismatches.push(`${where}: not a JSON object for ${type.name}`);
    return;
  }
  const byJson = new Map(type.fieldsArray.map((f) => [jsonName(f), f]));
  const seenOneofs = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    const field = byJson.get(key);
    if (!field) {
      t.checks++;
      t.mismatches.push(`${where}.${key}: ${type.name} has no such field`);
      continue;
    }
    t.fields.add(`${type.name}.${field.name}`);
    const oneof = field.partOf;
    if (oneof && !oneof.name.startsWith('_')) {
      const other = seenOneofs.get(oneof.name);
      if (other) t.mismatches.push(`${where}.${key}: oneof ${oneof.name} already set by ${other}`);
      seenOneofs.set(oneof.name, key);
    }
    checkField(field, v, `${where}.${key}`, t, dir);
  }
  if (dir === 'request')
    for (const field of type.fieldsArray)
      if (isRequired(field) && !(jsonName(field) in value))
        t.mismatches.push(`${where}: required ${type.name}.${jsonName(field)} is missing`);
}

function checkField(field: protobuf.Field, value: unknown, where: string, t: Tally, dir: Direction): void {
  if (field instanceof protobuf.MapField) {
    t.checks++;
    if (!value || typeof value !== 'object' || Array.isArray(value)) t.mismatches.push(`${where}: not a JSON map`);
    else for (const [k, v] of Object.entries(value)) checkValue(field, v, `${where}[${k}]`, t, dir);
    return;
  }
  if (field.repeated) {
    t.checks++;
    if (!Array.isArray(value)) t.mismatches.push(`${where}: not a list`);
    else value.forEach((v, i) => checkValue(field, v, `${where}[${i}]`, t, dir));
    return;
  }
  checkValue(field, value, where, t, dir);
}

function checkValue(field: protobuf.Field, value: unknown, where: string, t: Tally, dir: Direction): void {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    if (resolved.fullName === '.google.protobuf.Timestamp') {
      t.checks++;
      if (typeof value !== 'string' || !TIMESTAMP[dir].test(value) || Number.isNaN(Date.parse(value)))
        t.mismatches.push(`${where}: ${JSON.stringify(value)} is no RFC 3339 Timestamp (${dir})`);
      return;
    }
    if (resolved.fullName.startsWith('.google.protobuf.')) {
      t.mismatches.push(`${where}: ${resolved.fullName} is not checked by this mapping; extend proto-json.ts`);
      return;
    }
    checkMessage(resolved, value, where, t, dir);
    return;
  }
  t.checks++;
  const bad = (what: string) => t.mismatches.push(`${where}: ${JSON.stringify(value)} is not ${what}`);
  if (resolved instanceof protobuf.Enum) {
    if (typeof value === 'string' && t.deliberate.allowed.get(resolved.name)?.has(value)) t.deliberate.met++;
    else if (typeof value !== 'string' || !(value in resolved.values)) bad(`a value of ${resolved.name}`);
    return;
  }
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') bad('a string');
      return;
    case 'bool':
      if (typeof value !== 'boolean') bad('a boolean');
      return;
    case 'double':
    case 'float':
      if (typeof value !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(value as string)) bad('a number');
      return;
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      if (typeof value !== 'string' || !INT64.test(value) || BigInt(value) !== BigInt.asIntN(64, BigInt(value)))
        bad('an int64 as a decimal string');
      return;
    case 'uint64':
    case 'fixed64':
      if (typeof value !== 'string' || !UINT64.test(value) || BigInt(value) !== BigInt.asUintN(64, BigInt(value)))
        bad('a uint64 as a decimal string');
      return;
    case 'bytes':
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) bad('base64 bytes');
      return;
    default: {
      const range = INT32_RANGE[field.type];
      if (!range) {
        t.mismatches.push(`${where}: scalar type ${field.type} is not checked by this mapping`);
        return;
      }
      if (typeof value !== 'number' || !Number.isInteger(value) || value < range[0] || value > range[1])
        bad(`a ${field.type} number`);
    }
  }
}

/**
 * `body` wrapped so that every field a parser reads is checked to exist in `type`: a read of a name
 * the message lacks is a mismatch (the client would read nothing, ever). Lists are wrapped per element.
 */
export function readTracked(type: protobuf.Type, body: unknown, where: string, t: Tally): unknown {
  if (!body || typeof body !== 'object') return body;
  const byJson = new Map(type.fieldsArray.map((f) => [jsonName(f), f]));
  return new Proxy(body as Record<string, unknown>, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || key === 'toJSON' || key === 'then') return value;
      t.checks++;
      const field = byJson.get(key);
      if (!field) {
        t.mismatches.push(`${where}.${key}: the client reads a field ${type.name} lacks`);
        return value;
      }
      t.fields.add(`${type.name}.${field.name}`);
      const resolved = field.resolvedType;
      if (!(resolved instanceof protobuf.Type) || resolved.fullName.startsWith('.google.protobuf.')) return value;
      if (field.repeated && Array.isArray(value))
        return value.map((v, i) => readTracked(resolved, v, `${where}.${key}[${i}]`, t));
      return readTracked(resolved, value, `${where}.${key}`, t);
    },
  });
}
