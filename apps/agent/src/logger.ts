/**
 * The agent's logger: JSON lines on stdout (pino). Fields that could hold secrets are redacted
 * wherever they appear, and URLs are logged without their credentials.
 */
import pino, { type Logger } from "pino";

export function createLogger(level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    base: { service: "platform-agent" },
    redact: {
      paths: ["*.enrollmentToken", "*.userJwt", "*.seed", "*.creds", "*.password", "*.token"],
      censor: "[redacted]",
    },
  });
}

/** `url` with any user:password removed, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "[unparsable url]";
  }
}
