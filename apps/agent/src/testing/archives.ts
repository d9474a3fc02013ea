/**
 * Hand-made archives for tests (the agent's build tests, the control plane's drop uploads):
 * written byte by byte, so that malicious entries can be written exactly as an attacker would.
 */
import { crc32, gzipSync } from "node:zlib";

export interface ArchiveEntry {
  name: string;
  type?: "file" | "directory" | "symlink" | "hardlink" | "chardev";
  content?: string;
  /** Target of links. */
  target?: string;
  mode?: number;
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, "0")}\0`;
}

/** A gzipped tar (ustar) written byte by byte: names and link targets exactly as given. */
export function makeTarGz(entries: ArchiveEntry[]): Buffer {
  const blocks: Buffer[] = [];
  const typeFlags = { file: "0", hardlink: "1", symlink: "2", chardev: "3", directory: "5" };
  for (const entry of entries) {
    const type = entry.type ?? "file";
    const data = Buffer.from(type === "file" ? (entry.content ?? "") : "");
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100, "utf8");
    header.write(octal(entry.mode ?? (type === "directory" ? 0o755 : 0o644), 8), 100);
    header.write(octal(0, 8), 108);
    header.write(octal(0, 8), 116);
    header.write(octal(data.length, 12), 124);
    header.write(octal(Math.floor(Date.now() / 1000), 12), 136);
    header.write("        ", 148);
    header.write(typeFlags[type], 156);
    header.write(entry.target ?? "", 157, 100, "utf8");
    header.write("ustar\u000000", 257);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** A zip (stored entries, Unix modes in the external attributes) with names exactly as given. */
export function makeZip(entries: ArchiveEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const type = entry.type ?? "file";
    const name = Buffer.from(
      type === "directory" && !entry.name.endsWith("/") ? `${entry.name}/` : entry.name,
    );
    const data = Buffer.from(
      type === "symlink" ? (entry.target ?? "") : type === "file" ? (entry.content ?? "") : "",
    );
    const fileType = {
      file: 0o100000,
      directory: 0o040000,
      symlink: 0o120000,
      hardlink: 0o100000,
      chardev: 0o020000,
    }[type];
    const mode = fileType | (entry.mode ?? (type === "directory" ? 0o755 : 0o644));
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const centralDirectory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralDirectory, end]);
}
