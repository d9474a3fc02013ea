/**
 * Provider signatures over the raw request body, compared in constant time: GitHub's
 * X-Hub-Signature-256 (`sha256=<hex HMAC-SHA256>`), Gitea's X-Gitea-Signature (hex HMAC-SHA256;
 * it also sends GitHub's header), Bitbucket's X-Hub-Signature (`sha256=<hex>`), and GitLab's
 * X-Gitlab-Token (the secret itself).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookProvider } from "./payload.ts";

/** Equal strings, in time independent of where they differ (both are hashed to one length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(a), digest(b));
}

const hmacHex = (secret: string, body: Uint8Array) => createHmac("sha256", secret).update(body).digest("hex");

/** The signature the provider sent, normalized to what `expected` produces; null when missing. */
function sentSignature(provider: WebhookProvider, headers: Headers): string | null {
  switch (provider) {
    case "github":
      return headers.get("x-hub-signature-256");
    case "gitea": {
      const gitea = headers.get("x-gitea-signature");
      return gitea !== null ? `sha256=${gitea.trim().toLowerCase()}` : headers.get("x-hub-signature-256");
    }
    case "bitbucket":
      return headers.get("x-hub-signature");
    case "gitlab":
      return headers.get("x-gitlab-token");
  }
}

/** True when the request carries the right signature (or token) for `secret`. */
export function verifySignature(
  provider: WebhookProvider,
  secret: string,
  headers: Headers,
  rawBody: Uint8Array,
): boolean {
  const sent = sentSignature(provider, headers);
  if (sent === null) return false;
  const expected = provider === "gitlab" ? secret : `sha256=${hmacHex(secret, rawBody)}`;
  return constantTimeEqual(provider === "gitlab" ? sent : sent.trim().toLowerCase(), expected);
}
