import { ConfigError } from '../../../lib/config/errors';
import { cliSpec, failureOf, parseCli, UsageError, wantsHelp } from '../../../tools/cli/run';

const spec = cliSpec({
  usage: 'usage: npm run x -- <file> [--limit <n>] [--all]',
  options: { limit: { type: 'string' }, all: { type: 'boolean' }, id: { type: 'string', multiple: true } },
  positionals: { min: 1, max: 1 },
});

describe('the CLIs’ one parser (tools/cli/run.ts)', () => {
  it('reads flags, values and arguments', () => {
    expect(parseCli(spec, ['f.db', '--limit', '5', '--all', '--id', 'a', '--id=b'])).toEqual({
      values: { limit: '5', all: true, id: ['a', 'b'] },
      positionals: ['f.db'],
    });
  });

  it.each([
    [['f', '--bogus'], 'unknown option --bogus'],
    [['f', '-x'], 'unknown option -x'],
    [['f', '--limit'], '--limit needs a value'],
    [['f', '--limit', '--all'], '--limit needs a value'],
    [['f', '--all=yes'], "Option '--all' does not take an argument"],
    [[], 'an argument is missing'],
    [['f', 'g'], 'unexpected argument "g"'],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseCli(spec, argv)).toThrow(UsageError);
    expect(() => parseCli(spec, argv)).toThrow(message);
  });

  it('--help anywhere before `--` asks for the usage, whatever else is wrong; after `--` it is an argument', () => {
    expect(wantsHelp(['--bogus', '--help'])).toBe(true);
    expect(wantsHelp(['--limit', '-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(parseCli(spec, ['--', '--help']).positionals).toEqual(['--help']);
  });

  it('prints the usage after bad usage, the message of an expected refusal, the stack of anything else', () => {
    expect(failureOf(new UsageError('unknown option --x'), spec.usage)).toEqual({
      text: `unknown option --x\n\n${spec.usage}`,
      code: 2,
    });
    const config = new ConfigError(['TABLE_SYNC is required']);
    expect(failureOf(config, spec.usage, { expected: [ConfigError] })).toEqual({ text: config.message, code: 2 });
    const bug = new TypeError('boom');
    expect(failureOf(bug, spec.usage)).toEqual({ text: bug.stack, code: 2 });
    expect(failureOf(bug, spec.usage, { crash: { code: 1, stack: false } })).toEqual({ text: 'boom', code: 1 });
  });
});
