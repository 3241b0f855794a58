import { randomBytes } from 'node:crypto';

/**
 * docs/deploy.md read as an operator reads it: the secrets section's commands
 * (`npm run token -- …` and `aws secretsmanager create-secret …`) and the deploy
 * section's `export` lines and `serverless deploy` command, from the document's
 * `sh` code blocks. The deploy test (test/aws/) runs what it finds, so the
 * document cannot drift from what deploys; a line of a secrets block this
 * reader does not understand is an error, never skipped.
 */

export type RunbookStep =
  /** `npm run token -- …`: the operator runs it and copies what it printed into a later secret. */
  | { kind: 'token'; line: string; args: string[] }
  /** `aws secretsmanager create-secret --name <name> --secret-string '<value>'`, `$S` expanded, placeholders kept. */
  | { kind: 'create-secret'; line: string; name: string; value: string };

export interface Runbook {
  /** The stage of the deploy command (`--stage <stage>`). */
  stage: string;
  /** The secrets section's commands, in the document's order. */
  steps: RunbookStep[];
  /** The deploy section's `export NAME=value` settings (its blocks that only export, then the deploy block's), placeholders kept. */
  exports: Array<[name: string, value: string]>;
  /** The deploy command line itself (`npx serverless deploy --stage prod`). */
  deploy: string;
}

export class RunbookError extends Error {
  constructor(message: string) {
    super(`docs/deploy.md: ${message}`);
    this.name = 'RunbookError';
  }
}

/** The fenced code blocks of a markdown document, with the heading each sits under. */
export function codeBlocks(markdown: string): Array<{ heading: string; lines: string[] }> {
  const blocks: Array<{ heading: string; lines: string[] }> = [];
  let heading = '';
  let open: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (/^```\s*$/.test(line)) {
        blocks.push({ heading, lines: open });
        open = undefined;
      } else open.push(line);
    } else if (/^```/.test(line)) open = [];
    else if (/^#{1,6}\s/.test(line)) heading = line.replace(/^#+\s*/, '');
  }
  return blocks;
}

/** A shell line without its trailing `# comment` (none of the runbook's values holds a `#` after a space). */
function withoutComment(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trim();
}

const CREATE_SECRET = /^aws secretsmanager create-secret --name (\S+) --secret-string '([^']*)'$/;

export function readRunbook(markdown: string): Runbook {
  const blocks = codeBlocks(markdown);
  const secretBlocks = blocks.filter((b) => b.lines.some((l) => l.includes('secretsmanager create-secret')));
  if (secretBlocks.length === 0) throw new RunbookError('no code block creates a secret');
  const steps: RunbookStep[] = [];
  for (const block of secretBlocks) {
    const vars = new Map<string, string>();
    const expand = (text: string) =>
      text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => vars.get(name) ?? whole);
    for (const raw of block.lines) {
      const line = withoutComment(raw);
      if (!line) continue;
      const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$/.exec(line);
      if (assignment) {
        vars.set(assignment[1], expand(assignment[2]));
        continue;
      }
      if (line.startsWith('npm run token -- ')) {
        steps.push({ kind: 'token', line, args: line.slice('npm run token -- '.length).split(/\s+/) });
        continue;
      }
      const secret = CREATE_SECRET.exec(line);
      if (secret) {
        const name = expand(secret[1]);
        if (name.includes('$')) throw new RunbookError(`a variable is not set in "${line}"`);
        steps.push({ kind: 'create-secret', line, name, value: secret[2] });
        continue;
      }
      throw new RunbookError(
        `the secrets block under "${block.heading}" has a line the deploy test cannot follow: ${line}`,
      );
    }
  }

  const deployBlock = blocks.find(
    (b) => b.lines.some((l) => /^export /.test(l)) && b.lines.some((l) => /serverless deploy --stage /.test(l)),
  );
  if (!deployBlock) throw new RunbookError('no code block exports the settings and runs `serverless deploy --stage …`');
  const exports: Array<[string, string]> = [];
  let deploy: string | undefined;
  // The deploy block's exports, and those of the blocks of the same section that only export (the VPC's).
  const sectionExports = blocks.filter(
    (b) =>
      b !== deployBlock &&
      b.heading === deployBlock.heading &&
      b.lines.every((l) => !withoutComment(l) || withoutComment(l).startsWith('export ')),
  );
  for (const raw of [...sectionExports.flatMap((b) => b.lines), ...deployBlock.lines]) {
    const line = withoutComment(raw);
    if (line.startsWith('export ')) {
      // NAME=value pairs; a value holding a space is written in one <placeholder> (e.g. <globally unique name>).
      for (const pair of line.slice('export '.length).match(/[A-Za-z_][A-Za-z0-9_]*=(?:<[^>]*>|\S)+/g) ?? []) {
        const at = pair.indexOf('=');
        exports.push([pair.slice(0, at), pair.slice(at + 1)]);
      }
    } else if (/serverless deploy --stage /.test(line)) deploy ??= line;
  }
  const stage = /--stage (\S+)/.exec(deploy!)?.[1];
  if (!stage) throw new RunbookError(`the deploy command names no stage: ${deploy}`);
  return { stage, steps, exports, deploy: deploy! };
}

/** The placeholders of a value: `<what to put here>`, and the ellipsis `…` the document uses for "your value". */
export const PLACEHOLDER = /<[^<>]+>|…/g;

/**
 * A value of our own for a placeholder: lowercase letters, digits and hyphens,
 * so it is safe in JSON, in a shell word and as an S3 bucket name, and unique
 * per run so the test can look for it anywhere. A setting whose name says what
 * it is (a URL, subnets, security groups) gets a value of that form.
 */
export function generatedValue(placeholder: string, setting?: string): string {
  const slug =
    placeholder
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 24)
      .replace(/-+$/, '') || 'value';
  const id = randomBytes(5).toString('hex');
  if (setting?.startsWith('NATS') && setting.endsWith('_URL')) return `tls://${slug}-${id}.example.internal:4222`;
  if (setting?.endsWith('_URL')) return `https://${slug}-${id}.example.internal`;
  if (setting?.endsWith('SUBNET_IDS') || setting?.endsWith('SUBNETS'))
    return `subnet-${id}a,subnet-${randomBytes(5).toString('hex')}b`;
  if (setting?.includes('SECURITY_GROUP')) return `sg-${id}`;
  if (setting?.endsWith('EMAILS')) return `${slug}-${id}@example.com`;
  return `${slug}-${id}`;
}
