/**
 * The control plane's own backup from the command line (README "Upgrading"):
 *   npm run web-server-backup -- backup [key]    dumps the database into the bucket
 *   npm run web-server-backup -- restore <key>   rebuilds a fresh installation's database from it
 * The database is the control plane's (DATABASE_URL, or the embedded one under
 * PLATFORM_DATA_DIR); the bucket is named by PLATFORM_BACKUP_ENDPOINT ("" = AWS),
 * PLATFORM_BACKUP_REGION, PLATFORM_BACKUP_BUCKET, PLATFORM_BACKUP_ACCESS_KEY and
 * PLATFORM_BACKUP_SECRET_KEY, since the destinations of a lost installation are in the lost
 * database. Restore into a fresh database (migrated here first), then start the control plane
 * with the same PLATFORM_SECRET_KEY.
 */
import type { ObjectStorage } from "@platform/agent-protocol";
import { loadConfig } from "../config.ts";
import { type DatabaseTarget, migrateToLatest, openDatabase } from "../db/database.ts";
import { backupWebServer, restoreWebServer } from "./web-server.ts";

function storageFromEnv(env: NodeJS.ProcessEnv): ObjectStorage {
  const bucket = env.PLATFORM_BACKUP_BUCKET ?? "";
  if (!bucket) throw new Error("PLATFORM_BACKUP_BUCKET is required");
  return {
    endpoint: env.PLATFORM_BACKUP_ENDPOINT ?? "",
    region: env.PLATFORM_BACKUP_REGION ?? "us-east-1",
    bucket,
    accessKey: env.PLATFORM_BACKUP_ACCESS_KEY ?? "",
    secretAccessKey: env.PLATFORM_BACKUP_SECRET_KEY ?? "",
  };
}

async function main(argv: string[]): Promise<void> {
  const [command, keyArgument] = argv;
  const config = loadConfig();
  const target: DatabaseTarget = config.databaseUrl
    ? { kind: "postgres", url: config.databaseUrl }
    : { kind: "embedded", dataDir: config.dataDir };
  const storage = storageFromEnv(process.env);
  const database = await openDatabase(target);
  try {
    if (command === "backup") {
      const key = keyArgument ?? `web-server/platform-${new Date().toISOString().replace(/:/g, "-")}.json.gz`;
      const result = await backupWebServer(database.db, storage, key);
      console.log(
        `Backed up ${result.rows} rows of ${result.tables} tables to ${storage.bucket}/${key} (${result.sizeBytes} bytes)`,
      );
    } else if (command === "restore" && keyArgument) {
      await migrateToLatest(database.db);
      const result = await restoreWebServer(database.db, storage, keyArgument);
      console.log(`Restored ${result.rows} rows from ${storage.bucket}/${keyArgument}`);
    } else {
      throw new Error("usage: web-server-backup backup [key] | restore <key>");
    }
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
