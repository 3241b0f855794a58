import { MalformedItemError } from './errors';

/**
 * The named fields of a stored type, and what each holds: the ONE list an
 * item is written from (`pickFields`) and read back through (`readItem`), so
 * a field added to a model without being added here does not compile, and a
 * stored attribute that is not in the list (a key, an index key, a TTL, a
 * field of an older release) never reaches the model.
 *
 * A kind with `?` is optional: absent (or null) stays absent. Kinds are
 * checked, not parsed: a union of strings is `string`, a nested object is
 * `object` (its own reader, where it has one, checks its inside).
 */
export type FieldKind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';
export type FieldSpec<T> = { readonly [K in keyof T]-?: FieldKind | `${FieldKind}?` };

/** Copies the named fields of `source` that are present (DynamoDB refuses undefined); nothing else. */
export function pickFields<T extends object>(spec: FieldSpec<T>, source: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of Object.keys(spec)) {
    const value = (source as Record<string, unknown>)[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/**
 * The item as `T`: the named fields only, each of its kind; a required one
 * missing or any of another kind is a MalformedItemError naming `what`.
 */
export function readItem<T>(spec: FieldSpec<T>, raw: Record<string, unknown>, what: string): T {
  const out: Record<string, unknown> = {};
  for (const [field, want] of Object.entries<string>(spec)) {
    const optional = want.endsWith('?');
    const kind = (optional ? want.slice(0, -1) : want) as FieldKind;
    const value = raw[field];
    if (value === undefined || (value === null && optional)) {
      if (!optional) throw new MalformedItemError(what, field, kind);
      continue;
    }
    if (!isKind(value, kind)) throw new MalformedItemError(what, field, kind);
    out[field] = value;
  }
  // Every field of T was checked above against its spec: this is the one place the shape is asserted.
  return out as T;
}

function isKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case 'any':
      return true;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === kind;
  }
}
