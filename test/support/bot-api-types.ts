import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A JSON value checked against a type of the official Bot API typings that
 * ship with grammY (`@grammyjs/types`, read with the TypeScript compiler):
 * every required field present, no field the type does not name, the
 * primitives and literals right (`date: 0`, `is_bot: true`, `type:
 * "supergroup"`), arrays, unions (one member must fit whole) and
 * intersections. A field typed `?: undefined` (e.g. `title` of a private
 * chat) must be absent.
 *
 * `InaccessibleMessage` extends `Omit<Message, …>` in the typings, which
 * would let it carry any Message field; the Bot API describes it with three
 * fields only (chat, message_id, date), so only its own members are allowed.
 */

export interface Mismatch {
  at: string;
  problem: string;
}

export interface CheckResult {
  /** Field-level comparisons made: a required field looked for, a present field's value checked. */
  checks: number;
  mismatches: Mismatch[];
  /** Every type name an object was checked against (for the floor and the report). */
  types: Set<string>;
}

/** Types whose own declared members are the whole object (see above). */
const OWN_MEMBERS_ONLY = new Set(['InaccessibleMessage']);

export class BotApiTypes {
  readonly dir = path.resolve(__dirname, '../../node_modules/@grammyjs/types');
  readonly version: string;
  private readonly checker: ts.TypeChecker;
  private readonly exports = new Map<string, ts.Symbol>();

  constructor() {
    const entry = path.join(this.dir, 'mod.d.ts');
    const program = ts.createProgram([entry], { strict: true, noEmit: true, types: [], skipLibCheck: true });
    this.checker = program.getTypeChecker();
    const module = this.checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const symbol of this.checker.getExportsOfModule(module)) this.exports.set(symbol.name, symbol);
    this.version = (
      JSON.parse(readFileSync(path.join(this.dir, 'package.json'), 'utf8')) as { version: string }
    ).version;
  }

  /** An exported type by name (`Message`, `Update`, `UserFromGetMe`, `ApiError`, …). */
  type(name: string): ts.Type {
    const symbol = this.exports.get(name);
    if (!symbol) throw new Error(`@grammyjs/types exports no ${name}`);
    return this.checker.getDeclaredTypeOfSymbol(symbol);
  }

  /** What a method returns on success, from methods.d.ts `ApiMethods` (the `result` of its answer). */
  result(method: string): ts.Type {
    const methods = this.type('ApiMethods');
    const prop = methods.getProperty(method);
    if (!prop) throw new Error(`ApiMethods has no ${method}`);
    const [signature] = this.checker.getSignaturesOfType(this.typeOf(prop), ts.SignatureKind.Call);
    return signature.getReturnType();
  }

  show(type: ts.Type): string {
    return this.checker.typeToString(type);
  }

  check(value: unknown, type: ts.Type, at = '$'): CheckResult {
    const out: CheckResult = { checks: 0, mismatches: [], types: new Set() };
    this.walk(value, type, at, out);
    return out;
  }

  private typeOf(symbol: ts.Symbol): ts.Type {
    return this.checker.getTypeOfSymbol(symbol);
  }

  private walk(value: unknown, type: ts.Type, at: string, out: CheckResult): void {
    const f = type.flags;
    const bad = (problem: string): void => void out.mismatches.push({ at, problem });
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
    if (type.isUnion()) return this.union(value, type, at, out);
    if (value === undefined) return void (f & ts.TypeFlags.Undefined ? undefined : bad('missing'));
    if (f & ts.TypeFlags.Undefined)
      return bad(`present, but the type says it is never sent (${JSON.stringify(value)})`);
    if (type.isStringLiteral() || type.isNumberLiteral()) {
      if (value !== type.value) bad(`${JSON.stringify(value)} is not ${JSON.stringify(type.value)}`);
      return;
    }
    if (f & ts.TypeFlags.BooleanLiteral) {
      const literal = (type as unknown as { intrinsicName: string }).intrinsicName === 'true';
      if (value !== literal) bad(`${JSON.stringify(value)} is not ${literal}`);
      return;
    }
    if (f & ts.TypeFlags.String) return void (typeof value === 'string' ? undefined : bad(`not a string`));
    if (f & ts.TypeFlags.Number) return void (typeof value === 'number' ? undefined : bad(`not a number`));
    if (f & ts.TypeFlags.Boolean) return void (typeof value === 'boolean' ? undefined : bad(`not a boolean`));
    if (this.checker.isArrayType(type)) {
      if (!Array.isArray(value)) return bad('not an array');
      const [element] = this.checker.getTypeArguments(type as ts.TypeReference);
      value.forEach((v, i) => this.walk(v, element, `${at}[${i}]`, out));
      return;
    }
    if (f & ts.TypeFlags.Object || type.isIntersection()) return this.object(value, type, at, out);
    bad(`no rule for the type ${this.show(type)}`);
  }

  /** One member must fit whole; otherwise the closest member's mismatches are reported. */
  private union(value: unknown, type: ts.UnionType, at: string, out: CheckResult): void {
    const members = type.types.filter((t) => value !== undefined || t.flags & ts.TypeFlags.Undefined);
    let best: CheckResult | undefined;
    for (const member of value === undefined ? members : members.filter((t) => !(t.flags & ts.TypeFlags.Undefined))) {
      const trial = this.check(value, member, at);
      // The closest member: fewest mismatches, then the most fields compared (an object over `true`).
      if (
        !best ||
        trial.mismatches.length < best.mismatches.length ||
        (trial.mismatches.length === best.mismatches.length && trial.checks > best.checks)
      )
        best = trial;
      if (trial.mismatches.length === 0) break;
    }
    if (!best)
      return void out.mismatches.push({
        at,
        problem: value === undefined ? 'missing' : 'present, but the type says it is never sent',
      });
    out.checks += best.checks;
    out.mismatches.push(...best.mismatches);
    for (const t of best.types) out.types.add(t);
  }

  private object(value: unknown, type: ts.Type, at: string, out: CheckResult): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return void out.mismatches.push({ at, problem: `not an object (${JSON.stringify(value)})` });
    const name = type.aliasSymbol?.name ?? type.getSymbol()?.name;
    if (name && !name.startsWith('__')) out.types.add(name);
    const own = name && OWN_MEMBERS_ONLY.has(name) ? type.getSymbol()?.members : undefined;
    const props = this.checker.getPropertiesOfType(type).filter((p) => !own || own.has(p.escapedName));
    const known = new Set(props.map((p) => p.name));
    for (const prop of props) {
      const present = prop.name in value;
      const optional = Boolean(prop.flags & ts.SymbolFlags.Optional);
      if (!present && optional) continue;
      out.checks += 1;
      this.walk((value as Record<string, unknown>)[prop.name], this.typeOf(prop), `${at}.${prop.name}`, out);
    }
    for (const key of Object.keys(value)) {
      if (known.has(key)) continue;
      out.checks += 1;
      out.mismatches.push({ at: `${at}.${key}`, problem: `a field ${name ?? 'the type'} does not have` });
    }
  }
}
