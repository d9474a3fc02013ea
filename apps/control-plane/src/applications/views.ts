/**
 * Rows to API objects, and the sealing of the two secrets an application stores. The registry
 * password and build secrets are sealed with the SecretBox, bound to the application and its
 * organization, and never leave through a response.
 */
import type { SecretBox, SecretContext } from "../crypto/secret-box.ts";
import type { Application } from "../db/schema.ts";
import type { ApplicationView } from "./schemas.ts";

/** The stored application as responses show it: secrets dropped, Dokploy's customGitSSHKeyId spelling. */
export function toApplicationView(row: Application): ApplicationView {
  const {
    passwordSealed: _password,
    buildSecretsSealed: _buildSecrets,
    webhookSecretSealed: _webhookSecret,
    previewBuildSecretsSealed: _previewBuildSecrets,
    customGitSshKeyId,
    ...shown
  } = row;
  return { ...shown, customGitSSHKeyId: customGitSshKeyId };
}

export type ApplicationSecretField = "password" | "buildSecrets" | "webhookSecret" | "previewBuildSecrets";

const secretContext = (
  field: ApplicationSecretField,
  applicationId: string,
  organizationId: string,
): SecretContext => ({ table: `applications.${field}`, rowId: applicationId, organizationId });

/** The sealed form of a secret; null and "" store nothing. */
export function sealApplicationSecret(
  secrets: SecretBox,
  field: ApplicationSecretField,
  owner: { applicationId: string; organizationId: string },
  value: string | null,
): string | null {
  if (value === null || value === "") return null;
  return secrets.encrypt(value, secretContext(field, owner.applicationId, owner.organizationId));
}

/** Opens a sealed secret of the application (for deployments); null when none is stored. */
export function openApplicationSecret(
  secrets: SecretBox,
  field: ApplicationSecretField,
  owner: { applicationId: string; organizationId: string },
  sealed: string | null,
): string | null {
  if (sealed === null) return null;
  return secrets.decrypt(sealed, secretContext(field, owner.applicationId, owner.organizationId));
}
