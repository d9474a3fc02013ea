/**
 * The object storage helpers against s3rver (the S3 REST API on 127.0.0.1): a multipart
 * upload of a stream larger than a part, completed only when the stream ends normally; a
 * stream that fails leaves no object and no parts; the parts a killed process left are aborted
 * under a prefix only; listing pages, deletes and the connection probe; which object keys stay
 * in the bucket (why the API and the agent refuse '.' and '..' parts in a key).
 */
import { randomBytes } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  abortStaleUploads,
  deleteObject,
  downloadObject,
  listObjects,
  probeStorage,
  StorageProbeError,
  s3Client,
  uploadObject,
} from "./s3.ts";
import { leaveUnfinishedUpload, startTestS3, type TestS3 } from "./testing/s3.ts";

let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => s3?.close());

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe("object storage", () => {
  it("uploads a 20 MiB stream in parts and reads it back byte for byte", async () => {
    const data = randomBytes(20 * 1024 * 1024);
    const size = await uploadObject(
      s3.storage,
      "multi/big.bin.gz",
      Readable.from([data.subarray(0, 7e6), data.subarray(7e6)]),
    );
    expect(size).toBe(data.length);
    const { body, size: stored } = await downloadObject(s3.storage, "multi/big.bin.gz");
    expect(stored).toBe(data.length);
    expect((await readAll(body)).equals(data)).toBe(true);
  }, 60_000);

  it("leaves no object when the stream fails, before or after the first part", async () => {
    for (const [key, bytes] of [
      ["failed/small.gz", 1024],
      ["failed/large.gz", 12 * 1024 * 1024],
    ] as const) {
      const body = new PassThrough();
      const upload = uploadObject(s3.storage, key, body);
      body.write(randomBytes(bytes));
      setTimeout(() => body.destroy(new Error("the dump failed")), 200);
      await expect(upload).rejects.toThrow();
      expect((await listObjects(s3.storage, "failed/")).map((object) => object.key)).not.toContain(key);
    }
    // The failed multipart upload was aborted, not left behind.
    expect(await abortStaleUploads(s3.storage, "failed/")).toEqual([]);
  }, 60_000);

  it("settles a cancelled upload only once its request is answered, leaving no object whenever the cancel came", async () => {
    // The cancel comes once the whole body is sent and the server has yet to write it (issue 40:
    // Upload.abort() answered at once and the object landed after the caller had deleted it).
    const key = "cancelled/in-flight.tar.gz";
    const cancel = new AbortController();
    let written: Promise<void> = Promise.resolve();
    s3.beforeWrite(async (written_key) => {
      if (written_key !== key) return;
      cancel.abort();
      written = new Promise((resolve) => setTimeout(resolve, 300));
      await written;
    });
    try {
      await expect(
        uploadObject(s3.storage, key, Readable.from([randomBytes(64 * 1024)]), cancel.signal),
      ).rejects.toThrow();
      // Whatever the server still did with the request it had received is done by now.
      await written;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await listObjects(s3.storage, "cancelled/")).map((object) => object.key)).toEqual([]);
    } finally {
      s3.beforeWrite(undefined);
    }
  });

  it("aborts the multipart uploads a killed process left under a prefix, and only those", async () => {
    for (const key of ["stale/db/one.dump.gz", "kept/db/two.dump.gz"]) {
      await leaveUnfinishedUpload(s3.storage, key);
    }
    expect(await abortStaleUploads(s3.storage, "stale/")).toEqual(["stale/db/one.dump.gz"]);
    expect(await abortStaleUploads(s3.storage, "stale/")).toEqual([]);
    expect(await listObjects(s3.storage, "stale/")).toEqual([]);
    expect(await abortStaleUploads(s3.storage, "kept/")).toEqual(["kept/db/two.dump.gz"]);
  });

  it("lists every object under a prefix (files only) and deletes", async () => {
    for (const name of ["a", "b", "c"]) {
      await uploadObject(s3.storage, `list/x/${name}.gz`, Readable.from([Buffer.from(name)]));
    }
    await uploadObject(s3.storage, "listed-not/y.gz", Readable.from([Buffer.from("y")]));
    const listed = await listObjects(s3.storage, "list/");
    expect(listed.map((object) => object.key).sort()).toEqual(["list/x/a.gz", "list/x/b.gz", "list/x/c.gz"]);
    expect(listed[0]).toMatchObject({ size: 1 });
    await deleteObject(s3.storage, "list/x/b.gz");
    expect((await listObjects(s3.storage, "list/")).map((object) => object.key).sort()).toEqual([
      "list/x/a.gz",
      "list/x/c.gz",
    ]);
  });

  it("probes a bucket by writing, reading back and deleting an object, and says which step failed", async () => {
    await probeStorage(s3.storage);
    expect((await listObjects(s3.storage, ".platform-probe")).length).toBe(0);
    const missing = await probeStorage({ ...s3.storage, bucket: "no-such-bucket" }).catch((error) => error);
    expect(missing).toBeInstanceOf(StorageProbeError);
    expect(missing.step).toBe("write a probe object");
    expect(missing.message).toMatch(/NoSuchBucket/);
    const wrongKey = await probeStorage({ ...s3.storage, accessKey: "NOT-A-KEY" }).catch((error) => error);
    expect(wrongKey).toBeInstanceOf(StorageProbeError);
    expect(wrongKey.message).toMatch(/InvalidAccessKeyId/);
  });

  it("leaves the bucket for a key with '..' parts (hence refused), keeps '%2e%2e' and '\\' literal", async () => {
    const client = s3Client(s3.storage);
    await client.send(new CreateBucketCommand({ Bucket: "neighbour" }));
    client.destroy();
    await uploadObject(
      { ...s3.storage, bucket: "neighbour" },
      "secret.gz",
      Readable.from([Buffer.from("theirs")]),
    );
    // The client resolves '..' in its request path: the neighbour's object, read with our bucket named.
    const escaped = await downloadObject(s3.storage, "own/../../neighbour/secret.gz");
    expect((await readAll(escaped.body)).toString()).toBe("theirs");
    // Encoded dots and backslashes are a literal key of our bucket (none there: NoSuchKey).
    for (const key of ["own/%2e%2e/%2e%2e/neighbour/secret.gz", "own\\..\\..\\neighbour\\secret.gz"]) {
      await expect(downloadObject(s3.storage, key), key).rejects.toMatchObject({ name: "NoSuchKey" });
    }
  });
});
