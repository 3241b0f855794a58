import { progressBar, progressReporter, progressText } from '../../../tools/cli/progress';

describe('progress', () => {
  it('says rows, percent, rate and ETA', () => {
    expect(progressText(500, 2000, 1000)).toBe('500/2000 rows  25%  500 rows/s  ETA 3 s');
    expect(progressText(2000, 2000, 4000)).toBe('2000/2000 rows 100%  500 rows/s  done');
    expect(progressText(0, 2000, 0)).toBe('0/2000 rows   0%  0 rows/s  ETA ?');
    expect(progressBar(5, 10, 10)).toBe('[#####-----]');
  });

  it('redraws a bar on a terminal and prints plain lines elsewhere', () => {
    let t = 0;
    const tty: string[] = [];
    const onTty = progressReporter({ isTTY: true, write: (s: string) => tty.push(s) }, 10, () => t);
    const plain: string[] = [];
    const onFile = progressReporter({ write: (s: string) => plain.push(s) }, 10, () => t, 5000);
    for (let done = 1; done <= 10; done++) {
      t += 1000;
      onTty.tick(done);
      onFile.tick(done);
    }
    onTty.end(10);
    onFile.end(10);
    expect(tty.every((s) => s.startsWith('\r['))).toBe(true);
    expect(plain).toEqual([
      '5/10 rows  50%  1 rows/s  ETA 5 s\n',
      '10/10 rows 100%  1 rows/s  done\n',
      '10/10 rows 100%  1 rows/s  done\n',
    ]);
  });
});
