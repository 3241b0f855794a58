import { Readable } from 'node:stream';

/** A scan input opened, its length known, its bytes not read yet: streamed into the hot folder (decision 395). */
export interface ScanInput {
  length: number;
  body: Readable;
}

/** Bytes already in memory as an opened input (tests, tools). */
export function inputOf(bytes: Buffer): ScanInput {
  return { length: bytes.length, body: Readable.from([bytes]) };
}

/** An input taken and not wanted after all: its stream is closed (an unread S3 body holds its connection). */
export function discard(input: Promise<ScanInput> | ScanInput | undefined): void {
  if (!input) return;
  void Promise.resolve(input).then(
    (i) => i.body.destroy(),
    () => undefined,
  );
}
