import { parseArgs, seededRandom, UsageError } from '../../../tools/soak/args';

describe('soak flags', () => {
  it('defaults: 10 minutes, chaos on, a seed from the clock, the hot folder a share as root', () => {
    expect(parseArgs([], 1234, true)).toEqual({ minutes: 10, seed: 1234, chaos: true, hotFolder: 'smb', help: false });
    expect(parseArgs([], 1234, false).hotFolder).toBe('local');
  });

  it('reads every flag', () => {
    const argv = ['--minutes', '60', '--seed', '42', '--no-chaos', '--hotfolder', 'local', '--json', 'out/soak.json'];
    expect(parseArgs(argv, 0, true)).toEqual({
      minutes: 60,
      seed: 42,
      chaos: false,
      hotFolder: 'local',
      json: 'out/soak.json',
      help: false,
    });
    expect(parseArgs(['--help']).help).toBe(true);
  });

  it.each([
    [['--minutes'], '--minutes needs a value'],
    [['--minutes', '0'], '--minutes must be'],
    [['--minutes', '-3'], /--minutes (must be|needs a value)/],
    [['--minutes', '1e3'], '--minutes must be'],
    [['--minutes', '2000'], '--minutes must be'],
    [['--seed', 'abc'], '--seed must be'],
    [['--json', '--no-chaos'], '--json needs a value'],
    [['--chaos-monkey'], 'unknown option'],
    [['--hotfolder', 'SMB'], '--hotfolder must be smb or local'],
    [['--hotfolder', '../smb'], '--hotfolder must be smb or local'],
  ])('refuses %j with a clear error', (argv, message) => {
    expect(() => parseArgs(argv, 0, true)).toThrow(UsageError);
    expect(() => parseArgs(argv, 0, true)).toThrow(message);
  });

  it('refuses a share of its own without root, naming why', () => {
    expect(() => parseArgs(['--hotfolder', 'smb'], 0, false)).toThrow('--hotfolder smb needs root');
  });
});

describe('seeded random', () => {
  it('the same seed gives the same choices, another seed others', () => {
    const draw = (seed: number) => {
      const r = seededRandom(seed);
      return Array.from({ length: 20 }, () => r.int(0, 1000));
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it('int stays within its bounds, both ends reachable', () => {
    const r = seededRandom(1);
    const seen = new Set(Array.from({ length: 500 }, () => r.int(2, 5)));
    expect([...seen].sort()).toEqual([2, 3, 4, 5]);
  });
});
