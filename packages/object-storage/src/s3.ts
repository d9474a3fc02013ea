/**
 * Object storage for backups: an S3-compatible bucket through the AWS SDK (multipart uploads
 * with @aws-sdk/lib-storage). A custom endpoint (MinIO, R2, a local server) is addressed
 * path-style, and checksums are computed only where the API requires them (many S3-compatible
 * servers refuse the SDK's default checksum trailers). Used by the agent (uploads and downloads
 * happen in its own process, where the destination is reachable) and by the control plane
 * (connection tests, listing, retention).
 */
import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { ObjectStorage } from "@platform/agent-protocol";

/** 8 MiB parts, 2 in flight: bounded memory whatever the dump's size. */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

export function s3Client(storage: ObjectStorage): S3Client {
  const endpoint = storage.endpoint.trim();
  return new S3Client({
    region: storage.region || "us-east-1",
    credentials: { accessKeyId: storage.accessKey, secretAccessKey: storage.secretAccessKey },
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 3,
  });
}

/**
 * Uploads `body` as `key` with a multipart upload; the object exists only once the upload is
 * completed, which happens after `body` ended normally. A body that fails (destroyed with an
 * error) aborts the upload: no object, no parts kept. Answers the bytes uploaded.
 *
 * `signal` fails the body rather than calling Upload.abort(), whose done() rejects at once while
 * its last part or its completion is still in flight (an object could land after the caller
 * was told it was cancelled): this settles only once no request is in flight, and a cancelled
 * upload that still completed is deleted before it rejects.
 */
export async function uploadObject(
  storage: ObjectStorage,
  key: string,
  body: Readable,
  signal?: AbortSignal,
): Promise<number> {
  const client = s3Client(storage);
  let bytes = 0;
  body.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  const upload = new Upload({
    client,
    params: { Bucket: storage.bucket, Key: key, Body: body, ContentType: "application/gzip" },
    partSize: PART_SIZE,
    queueSize: QUEUE_SIZE,
    leavePartsOnError: false,
  });
  const abort = () => {
    body.destroy(new Error("the upload was cancelled"));
  };
  if (signal?.aborted) abort();
  else signal?.addEventListener("abort", abort, { once: true });
  try {
    await upload.done();
    if (signal?.aborted) {
      await client.send(new DeleteObjectCommand({ Bucket: storage.bucket, Key: key }));
      throw new Error("the upload was cancelled");
    }
    return bytes;
  } finally {
    signal?.removeEventListener("abort", abort);
    client.destroy();
  }
}

/** The object `key` as a stream. */
export async function downloadObject(
  storage: ObjectStorage,
  key: string,
  signal?: AbortSignal,
): Promise<{ body: Readable; size: number }> {
  const client = s3Client(storage);
  const answer = await client.send(new GetObjectCommand({ Bucket: storage.bucket, Key: key }), {
    abortSignal: signal,
  });
  const body = answer.Body as Readable | undefined;
  if (!body) throw new Error(`the object ${key} has no body`);
  body.once("close", () => client.destroy());
  return { body, size: answer.ContentLength ?? 0 };
}

export interface StoredObject {
  key: string;
  size: number;
  lastModified: Date;
}

/** Every object whose key starts with `prefix` (all pages), oldest first, then by key. */
export async function listObjects(storage: ObjectStorage, prefix: string): Promise<StoredObject[]> {
  const client = s3Client(storage);
  try {
    const objects: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: storage.bucket,
          Prefix: prefix || undefined,
          ContinuationToken: token,
        }),
      );
      for (const item of page.Contents ?? []) {
        if (!item.Key || item.Key.endsWith("/")) continue;
        objects.push({
          key: item.Key,
          size: Number(item.Size ?? 0),
          lastModified: item.LastModified ?? new Date(0),
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return objects.sort(
      (a, b) => a.lastModified.getTime() - b.lastModified.getTime() || a.key.localeCompare(b.key),
    );
  } finally {
    client.destroy();
  }
}

export async function deleteObject(storage: ObjectStorage, key: string): Promise<void> {
  const client = s3Client(storage);
  try {
    await client.send(new DeleteObjectCommand({ Bucket: storage.bucket, Key: key }));
  } finally {
    client.destroy();
  }
}

/**
 * Aborts every unfinished multipart upload whose key starts with `prefix` (all pages): the
 * parts an upload left when its process was killed, which the bucket keeps (and bills) until
 * aborted. Answers the keys aborted. The caller makes sure no upload under `prefix` is live.
 */
export async function abortStaleUploads(storage: ObjectStorage, prefix: string): Promise<string[]> {
  const client = s3Client(storage);
  try {
    const aborted: string[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await client.send(
        new ListMultipartUploadsCommand({
          Bucket: storage.bucket,
          Prefix: prefix || undefined,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId) continue;
        await client.send(
          new AbortMultipartUploadCommand({
            Bucket: storage.bucket,
            Key: upload.Key,
            UploadId: upload.UploadId,
          }),
        );
        aborted.push(upload.Key);
      }
      if (!page.IsTruncated) return aborted;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  } finally {
    client.destroy();
  }
}

/**
 * A destination's connection test: writes a probe object, reads it back, compares and deletes
 * it. Throws with the step that failed.
 */
export async function probeStorage(storage: ObjectStorage): Promise<void> {
  const client = s3Client(storage);
  const key = `.platform-probe-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const content = `platform destination test ${key}`;
  let step = "write a probe object";
  try {
    await client.send(
      new PutObjectCommand({ Bucket: storage.bucket, Key: key, Body: content, ContentType: "text/plain" }),
    );
    step = "read the probe object back";
    const answer = await client.send(new GetObjectCommand({ Bucket: storage.bucket, Key: key }));
    const read = await answer.Body?.transformToString();
    if (read !== content) throw new Error("the probe object read back differs from what was written");
    step = "delete the probe object";
    await client.send(new DeleteObjectCommand({ Bucket: storage.bucket, Key: key }));
  } catch (error) {
    throw new StorageProbeError(step, error);
  } finally {
    client.destroy();
  }
}

export class StorageProbeError extends Error {
  constructor(
    readonly step: string,
    override readonly cause: unknown,
  ) {
    super(`could not ${step}: ${describeStorageError(cause)}`);
    this.name = "StorageProbeError";
  }
}

/** A short reason for an SDK failure: the S3 error code, or the network error's code. */
export function describeStorageError(error: unknown): string {
  const named = error as { name?: string; Code?: string; code?: string; message?: string } | undefined;
  const code = named?.Code ?? (named?.name && named.name !== "Error" ? named.name : undefined) ?? named?.code;
  return code ? String(code) : (named?.message ?? String(error));
}

/** A Readable of a string (tests and small bodies). */
export const readableOf = (text: string): Readable => Readable.from([Buffer.from(text)]);
