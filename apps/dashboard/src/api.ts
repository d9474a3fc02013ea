/**
 * The dashboard's client of the public API: relative URLs only (the page works at whatever
 * origin serves it), the session cookie sent by the browser, and the session's CSRF token (the
 * platform_csrf cookie) in X-CSRF-Token on every mutation.
 */
import type { operations } from "./generated/api-types.ts";

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

/** Queries on their way: the same query asked twice meanwhile (the sidebar and a page) is sent once. */
const pending = new Map<string, Promise<unknown>>();

/** A query: GET /api/<name>?input=<JSON>. */
export function query<T>(name: string, input?: Record<string, unknown>): Promise<T> {
  const search = input ? `?input=${encodeURIComponent(JSON.stringify(input))}` : "";
  const url = `/api/${name}${search}`;
  const asked = pending.get(url);
  if (asked) return asked as Promise<T>;
  const sent = fetch(url, { headers: { accept: "application/json" } })
    .then((response) => answer<T>(response, name))
    .finally(() => pending.delete(url));
  pending.set(url, sent);
  return sent;
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

// The shapes the pages read: the API's own answers, from the types `pnpm generate:api-types`
// makes of its OpenAPI document (generated/api-types.ts), never copied by hand.

/** What procedure `Name` answers with 200, as the API's OpenAPI document describes it. */
export type Answer<Name extends keyof operations> = operations[Name] extends {
  responses: { 200: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

/** The JSON body procedure `Name` (a mutation) accepts, as the API's OpenAPI document describes it. */
export type RequestBody<Name extends keyof operations> = operations[Name] extends {
  requestBody?: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

/** The signed-in user (user.get), with the permission flags the pages read. */
export type User = Answer<"user.get">;
/** A member of the organization (user.all). */
export type Member = Answer<"user.all">[number];
/** A project with its environments and their services' summaries (project.all, project.one). */
export type Project = Answer<"project.all">[number];
export type Environment = Project["environments"][number];
/** An application's settings (application.one). */
export type Application = Answer<"application.one">;
/** A deployment of an application or a compose service (deployment.all, deployment.allByCompose). */
export type Deployment = Answer<"deployment.all">[number];
/** A domain of an application (domain.byApplicationId). */
export type Domain = Answer<"domain.byApplicationId">[number];
