import fs from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/**
 * The files of a zip as `serverless package` writes them (stored or deflated entries, no zip64, no encryption):
 * name → contents, read through the central directory as `unzip` does. The tests unpack packaged functions with it
 * without depending on an `unzip` binary or a zip package of their own.
 */
export function readZip(file: string): Map<string, Buffer> {
  const zip = fs.readFileSync(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error(`${file}: no end of central directory`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory entry ${i}`);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + skip;
    if (name.endsWith('/')) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    const body = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : undefined;
    if (!body) throw new Error(`${file}: ${name} uses compression method ${method}`);
    if (body.length !== size) throw new Error(`${file}: ${name} unpacked to ${body.length} bytes, not ${size}`);
    files.set(name, body);
  }
  return files;
}
