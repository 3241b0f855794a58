import { dockerInstructions } from '../deploy/scan-image';

/**
 * Base images named by digest (issue 51, "The images name base tags, not digests"; decision 452). A tag moves: the
 * same Dockerfile built twice may get two different bases, and a build cannot say which one it tested. Every `FROM`
 * of the project's Dockerfiles must therefore name `<image>@sha256:<64 hex>` (a tag before the `@` may stay, for the
 * reader), directly or through an `ARG` whose default does, or an earlier stage of the same file. The locally made
 * bases (tools/images/build.ts) are passed as `--build-arg BASE=<image id>`: an id is a digest of the image's
 * configuration, so it pins too.
 */

/** The project's Dockerfiles, from the repository root: the lint (test/unit/images/pins.test.ts) reads each. */
export const DOCKERFILES = ['images/scan/Dockerfile', 'connector/Dockerfile'] as const;

const DIGEST = /^[^\s@]+@sha256:[0-9a-f]{64}$/;
/** What `--build-arg BASE=` may be besides a digest reference: a local image id (`sha256:<hex>` or the bare hex). */
export const IMAGE_ID = /^(sha256:)?[0-9a-f]{64}$/;

/** Each `FROM` of a Dockerfile that names no digest, as a sentence; empty when all are pinned. */
export function unpinnedBases(text: string): string[] {
  const problems: string[] = [];
  const defaults = new Map<string, string | undefined>();
  const stages = new Set<string>();
  for (const { keyword, args } of dockerInstructions(text)) {
    if (keyword === 'ARG') {
      for (const word of args.split(/\s+/)) {
        const eq = word.indexOf('=');
        if (eq < 0) defaults.set(word, undefined);
        else defaults.set(word.slice(0, eq), word.slice(eq + 1).replace(/^"(.*)"$/, '$1'));
      }
      continue;
    }
    if (keyword !== 'FROM') continue;
    const words = args.split(/\s+/).filter((w) => !w.startsWith('--'));
    const named = words[0] ?? '';
    const alias = words.length >= 3 && words[1].toLowerCase() === 'as' ? words[2] : undefined;
    let missing: string | undefined;
    const image = named.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a, b) => {
      const name = (a ?? b) as string;
      const value = defaults.get(name);
      if (value === undefined) missing = name;
      return value ?? '';
    });
    if (missing !== undefined) problems.push(`FROM ${named}: ARG ${missing} has no default naming a digest`);
    else if (stages.has(image)) {
      // an earlier stage of this file
    } else if (!DIGEST.test(image)) problems.push(`FROM ${named}: ${image} names no digest (@sha256:<64 hex>)`);
    if (alias) stages.add(alias);
  }
  return problems;
}

/**
 * The Dockerfile with ARG `name`'s default re-pinned: its image and tag kept, the digest replaced (what
 * `npm run images:pin` writes after asking the registry). Refuses a digest that is not one, or a file without it.
 */
export function withDigest(text: string, name: string, digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`not a digest: ${JSON.stringify(digest)}`);
  const line = new RegExp(`^(ARG\\s+${name}=)([^\\s@]+)(@sha256:[0-9a-f]{64})?[ \\t]*$`, 'm');
  if (!line.test(text)) throw new Error(`no "ARG ${name}=<image>" line`);
  return text.replace(line, (_m, head: string, image: string) => `${head}${image}@${digest}`);
}

/** The image and tag an ARG's default names, without its digest (what the registry is asked to resolve). */
export function pinnedImage(text: string, name: string): string {
  const m = new RegExp(`^ARG\\s+${name}=([^\\s@]+)`, 'm').exec(text);
  if (!m) throw new Error(`no "ARG ${name}=<image>" line`);
  return m[1];
}
