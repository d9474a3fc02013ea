/**
 * The dashboard's client of the public API: relative URLs only (the page works at whatever
 * origin serves it), the session cookie sent by the browser, and the session's CSRF token (the
 * platform_csrf cookie) in X-CSRF-Token on every mutation.
 */

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Called when an answer says the session is gone (401): the page shows the sign-in form. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

function csrfToken(): string {
  const found = document.cookie.split(";").find((part) => part.trim().startsWith("platform_csrf="));
  return found ? found.trim().slice("platform_csrf=".length) : "";
}

async function answer<T>(response: Response, name: string): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) {
    const message =
      (body as { error?: { message?: string } } | null)?.error?.message ??
      `${name} answered ${response.status}`;
    if (response.status === 401 && !name.startsWith("auth.")) onSignedOut();
    throw new ApiFailure(message, response.status);
  }
  return body as T;
}

/** A query: GET /api/<name>?input=<JSON>. */
export async function query<T>(name: string, input?: Record<string, unknown>): Promise<T> {
  const search = input ? `?input=${encodeURIComponent(JSON.stringify(input))}` : "";
  const response = await fetch(`/api/${name}${search}`, { headers: { accept: "application/json" } });
  return answer<T>(response, name);
}

/** A mutation: POST /api/<name> with a JSON body and the CSRF token. */
export async function mutate<T>(name: string, input: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`/api/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": csrfToken() },
    body: JSON.stringify(input),
  });
  return answer<T>(response, name);
}

export function isSignedIn(): boolean {
  return csrfToken() !== "";
}

// The shapes the pages read (a subset of the API's; see /api/docs).
export interface User {
  userId: string;
  organizationId: string;
  email: string;
  name: string;
  role: "owner" | "admin" | "member";
  canCreateProjects: boolean;
  canCreateServices: boolean;
}
export interface ServiceSummary {
  name: string;
  appName: string;
  applicationStatus?: string;
  composeStatus?: string;
  [id: string]: unknown;
}
export interface Environment {
  environmentId: string;
  projectId: string;
  name: string;
  description: string | null;
  applications: ServiceSummary[];
  postgres: ServiceSummary[];
  mysql: ServiceSummary[];
  mariadb: ServiceSummary[];
  mongo: ServiceSummary[];
  redis: ServiceSummary[];
  compose: ServiceSummary[];
}
export interface Project {
  projectId: string;
  name: string;
  description: string | null;
  createdAt: string;
  environments: Environment[];
}
export interface Application {
  applicationId: string;
  environmentId: string;
  name: string;
  appName: string;
  applicationStatus: string;
  sourceType: string;
  dockerImage: string | null;
  env: string | null;
  createEnvFile: boolean | null;
  ports: { portId: string; publishedPort: number; targetPort: number; protocol: string }[];
}
export interface Deployment {
  deploymentId: string;
  title: string;
  status: "idle" | "running" | "done" | "error" | "cancelled";
  errorMessage: string | null;
  createdAt: string;
}
export interface Domain {
  domainId: string;
  host: string;
  path: string | null;
  port: number | null;
  https: boolean;
}
