/**
 * The instance's SSH private key (settings.saveSSHPrivateKey): one key in the web server
 * settings row, checked to be an unencrypted private key, sealed with the SecretBox bound to
 * that row and the instance organization, and never shown: getWebServerSettings says only
 * whether one is stored (`[redacted]`, or null).
 */
import type { ServiceContext } from "../context.ts";
import type { WebServerSettings } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { instanceOrganizationId } from "../organizations/instance.ts";
import { ssh2 } from "../servers/ssh2.ts";

const REDACTED = "[redacted]";

export function redactedSshPrivateKey(
  settings: Pick<WebServerSettings, "sshPrivateKeySealed">,
): string | null {
  return settings.sshPrivateKeySealed ? REDACTED : null;
}

export async function saveInstanceSshPrivateKey(ctx: ServiceContext, privateKey: string): Promise<void> {
  const parsed = ssh2().utils.parseKey(privateKey);
  if (parsed instanceof Error || !parsed.isPrivateKey()) {
    const reason = parsed instanceof Error ? `: ${parsed.message}` : "";
    throw badRequest(`sshPrivateKey is not a usable SSH private key${reason}`, { fields: ["sshPrivateKey"] });
  }
  const organizationId = (await instanceOrganizationId(ctx.db)) ?? "";
  const sealed = ctx.secrets.encrypt(privateKey, {
    table: "web_server_settings",
    rowId: "1",
    organizationId,
  });
  await ctx.db
    .updateTable("webServerSettings")
    .set({ sshPrivateKeySealed: sealed, updatedAt: new Date().toISOString() })
    .where("id", "=", 1)
    .execute();
}

/** settings.cleanSSHPrivateKey: forgets the stored key. */
export async function clearInstanceSshPrivateKey(ctx: Pick<ServiceContext, "db">): Promise<void> {
  await ctx.db
    .updateTable("webServerSettings")
    .set({ sshPrivateKeySealed: null, updatedAt: new Date().toISOString() })
    .where("id", "=", 1)
    .execute();
}
