/**
 * The S3 stand-in of the tests: s3rver (an S3 REST API server) on 127.0.0.1 at an ephemeral
 * port, its files in a temporary directory, with one bucket. Credentials are s3rver's own
 * (S3RVER / S3RVER); the SDK signs requests and s3rver checks the signatures.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ObjectStorage } from "@platform/agent-protocol";
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver";

export interface TestS3 {
  endpoint: string;
  storage: ObjectStorage;
  /** The directory s3rver keeps the objects in. */
  directory: string;
  close(): Promise<void>;
}

export async function startTestS3(bucket = "backups"): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), "platform-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    directory,
    storage: { endpoint, region: "us-east-1", bucket, accessKey: "S3RVER", secretAccessKey: "S3RVER" },
    close: async () => {
      await server.close().catch(() => {});
      await rm(directory, { recursive: true, force: true });
    },
  };
}
