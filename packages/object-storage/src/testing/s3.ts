/**
 * The S3 stand-in of the tests: s3rver (an S3 REST API server) on 127.0.0.1 at an ephemeral
 * port, its files in a temporary directory, with one bucket. Credentials are s3rver's own
 * (S3RVER / S3RVER); the SDK signs requests and s3rver checks the signatures. s3rver 3 answers
 * NotImplemented to ListMultipartUploads and AbortMultipartUpload: both are served here from
 * its own upload store (multipartUploads below; these two skip the signature check).
 * refuseDeletes makes it answer AccessDenied to DeleteObject under a prefix, as a bucket whose
 * policy forbids deletes does.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { CreateMultipartUploadCommand, UploadPartCommand } from "@aws-sdk/client-s3";
import type { ObjectStorage } from "@platform/agent-protocol";
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver";
import { s3Client } from "../s3.ts";

export interface TestS3 {
  endpoint: string;
  storage: ObjectStorage;
  /** The directory s3rver keeps the objects in. */
  directory: string;
  /** From now on DeleteObject of a key under `prefix` is refused (403 AccessDenied); undefined: none is. */
  refuseDeletes(prefix: string | undefined): void;
  /**
   * From now on a PUT of an object (or a part) waits for `hook(key)` before the server writes it:
   * a request in flight at a chosen moment; undefined: none waits.
   */
  beforeWrite(hook: ((key: string) => Promise<void>) | undefined): void;
  close(): Promise<void>;
}

/** `parent`: where its directory is made (a benchmark keeps the bucket off the measured disk). */
export async function startTestS3(bucket = "backups", parent = tmpdir()): Promise<TestS3> {
  const directory = await mkdtemp(path.join(parent, "platform-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  let refusedPrefix: string | undefined;
  let writeHook: ((key: string) => Promise<void>) | undefined;
  // Before s3rver's router, its last middleware.
  server.middleware.splice(
    server.middleware.length - 1,
    0,
    refusedDeletes(() => refusedPrefix),
    async (ctx: KoaContext, next: () => Promise<void>) => {
      const key = decodeURIComponent(ctx.path.slice(1).split("/").slice(1).join("/"));
      if (writeHook && ctx.method === "PUT" && key !== "") await writeHook(key);
      await next();
    },
    multipartUploads(server),
  );
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    directory,
    refuseDeletes: (prefix) => {
      refusedPrefix = prefix;
    },
    beforeWrite: (hook) => {
      writeHook = hook;
    },
    storage: { endpoint, region: "us-east-1", bucket, accessKey: "S3RVER", secretAccessKey: "S3RVER" },
    close: async () => {
      await server.close().catch(() => {});
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** What a process killed mid-upload leaves: a multipart upload of `key` with one part, never completed. */
export async function leaveUnfinishedUpload(storage: ObjectStorage, key: string): Promise<void> {
  const client = s3Client(storage);
  try {
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: storage.bucket, Key: key }),
    );
    await client.send(
      new UploadPartCommand({
        Bucket: storage.bucket,
        Key: key,
        UploadId,
        PartNumber: 1,
        Body: Buffer.alloc(1024),
      }),
    );
  } finally {
    client.destroy();
  }
}

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  type: string;
}

const xml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** DeleteObject (DELETE /bucket/key, no uploadId) of a key under the refused prefix: 403 AccessDenied. */
function refusedDeletes(refused: () => string | undefined) {
  return async (ctx: KoaContext, next: () => Promise<void>) => {
    const prefix = refused();
    const key = decodeURIComponent(ctx.path.slice(1).split("/").slice(1).join("/"));
    if (
      prefix !== undefined &&
      key !== "" &&
      ctx.method === "DELETE" &&
      !("uploadId" in ctx.query) &&
      key.startsWith(prefix)
    ) {
      ctx.status = 403;
      ctx.type = "application/xml";
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;
      return;
    }
    await next();
  };
}

/** ListMultipartUploads (GET /bucket?uploads) and AbortMultipartUpload (DELETE /bucket/key?uploadId). */
function multipartUploads(server: {
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
}) {
  return async (ctx: KoaContext, next: () => Promise<void>) => {
    const [bucket = "", ...keyParts] = ctx.path
      .slice(1)
      .split("/")
      .filter((part, index) => index === 0 || part !== "");
    const uploadsDirectory = () => server.store.getResourcePath(bucket, undefined, "uploads");
    if (ctx.method === "GET" && keyParts.length === 0 && "uploads" in ctx.query) {
      const prefix = String(ctx.query.prefix ?? "");
      const entries: string[] = [];
      const ids = await readdir(uploadsDirectory()).catch(() => [] as string[]);
      for (const uploadId of ids.sort()) {
        const directory = path.join(uploadsDirectory(), uploadId);
        const key = await readFile(path.join(directory, "key"), "utf8").catch(() => undefined);
        if (key === undefined || !key.startsWith(prefix)) continue;
        const initiated = (await stat(directory)).birthtime.toISOString();
        entries.push(
          `<Upload><Key>${xml(key)}</Key><UploadId>${xml(uploadId)}</UploadId><Initiated>${initiated}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`,
        );
      }
      ctx.type = "application/xml";
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${xml(bucket)}</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><Prefix>${xml(prefix)}</Prefix><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>${entries.join("")}</ListMultipartUploadsResult>`;
      return;
    }
    const uploadId = ctx.query.uploadId;
    if (ctx.method === "DELETE" && keyParts.length > 0 && typeof uploadId === "string") {
      const directory = path.join(uploadsDirectory(), path.basename(uploadId));
      const exists = await stat(directory).then(
        () => true,
        () => false,
      );
      if (!exists) {
        ctx.status = 404;
        ctx.type = "application/xml";
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`;
        return;
      }
      await rm(directory, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    await next();
  };
}
