/**
 * A local stand-in for Cloudflare's v4 API (the DNS part, as documented at
 * developers.cloudflare.com/api): GET /user/tokens/verify, GET /zones (paged), and
 * GET/POST/PUT/DELETE /zones/<zone>/dns_records[/<record>] with the type and name filters, each
 * answered in Cloudflare's envelope `{success, errors, messages, result, result_info}`. Requests
 * with another token than one of `tokens` are 401 (Cloudflare's code 10000). Every request is
 * recorded (method, path, query, Authorization header, body) for the tests to check.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface StandInRecord {
  id: string;
  type: string;
  name: string;
  content: string;
  ttl: number;
  /** As sent (Cloudflare's default false when left out). */
  proxied: boolean;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  body: unknown;
}

export interface CloudflareStandIn {
  url: string;
  /** Tokens accepted; replace freely. */
  tokens: Set<string>;
  zones: { id: string; name: string }[];
  records: Map<string, StandInRecord[]>;
  seen: SeenRequest[];
  close(): Promise<void>;
}

const hexId = () => randomBytes(16).toString("hex");

export async function startCloudflareStandIn(
  zoneNames: string[],
  tokens: string[],
): Promise<CloudflareStandIn> {
  const state: Omit<CloudflareStandIn, "url" | "close"> = {
    tokens: new Set(tokens),
    zones: zoneNames.map((name) => ({ id: hexId(), name })),
    records: new Map(),
    seen: [],
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://cloudflare");
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      state.seen.push({
        method: request.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: request.headers.authorization,
        body,
      });
      const send = (status: number, result: unknown, info?: Record<string, number>) => {
        const success = status < 400;
        response.writeHead(status, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            success,
            errors: success ? [] : [result],
            messages: [],
            result: success ? result : null,
            ...(info ? { result_info: info } : {}),
          }),
        );
      };
      const page = <T>(items: T[]) => {
        const perPage = Number(url.searchParams.get("per_page") ?? 20);
        const number = Number(url.searchParams.get("page") ?? 1);
        const slice = items.slice((number - 1) * perPage, number * perPage);
        send(200, slice, {
          page: number,
          per_page: perPage,
          count: slice.length,
          total_count: items.length,
          total_pages: Math.max(1, Math.ceil(items.length / perPage)),
        });
      };
      const token = request.headers.authorization?.replace(/^Bearer /, "");
      if (!token || !state.tokens.has(token)) {
        return send(401, { code: 10000, message: "Authentication error" });
      }
      const path = url.pathname.replace(/^\/client\/v4/, "");
      if (request.method === "GET" && path === "/user/tokens/verify") {
        return send(200, { id: hexId(), status: "active" });
      }
      if (request.method === "GET" && path === "/zones") return page(state.zones);
      const match = /^\/zones\/([^/]+)\/dns_records(?:\/([^/]+))?$/.exec(path);
      const zone = match && state.zones.find((candidate) => candidate.id === decodeURIComponent(match[1]!));
      if (!match || !zone) return send(404, { code: 7003, message: "Could not route to the zone" });
      const records = state.records.get(zone.id) ?? [];
      state.records.set(zone.id, records);
      const recordId = match[2] && decodeURIComponent(match[2]);
      const fields = body as Partial<StandInRecord> | null;
      const valid = () =>
        fields &&
        typeof fields.type === "string" &&
        typeof fields.name === "string" &&
        typeof fields.content === "string" &&
        (fields.name === zone.name || fields.name.endsWith(`.${zone.name}`));
      if (!recordId) {
        if (request.method === "GET") {
          const type = url.searchParams.get("type");
          const name = url.searchParams.get("name");
          return page(records.filter((r) => (!type || r.type === type) && (!name || r.name === name)));
        }
        if (request.method === "POST") {
          if (!valid()) return send(400, { code: 9000, message: "DNS name is invalid." });
          const record = {
            id: hexId(),
            type: fields!.type!,
            name: fields!.name!,
            content: fields!.content!,
            ttl: fields!.ttl ?? 1,
            proxied: fields!.proxied ?? false,
          };
          records.push(record);
          return send(200, record);
        }
        return send(405, { code: 10405, message: "Method not allowed" });
      }
      const index = records.findIndex((record) => record.id === recordId);
      if (index < 0) return send(404, { code: 81044, message: "Record does not exist." });
      if (request.method === "GET") return send(200, records[index]);
      if (request.method === "PUT") {
        if (!valid()) return send(400, { code: 9000, message: "DNS name is invalid." });
        records[index] = {
          id: recordId,
          type: fields!.type!,
          name: fields!.name!,
          content: fields!.content!,
          ttl: fields!.ttl ?? 1,
          proxied: fields!.proxied ?? false,
        };
        return send(200, records[index]);
      }
      if (request.method === "DELETE") {
        records.splice(index, 1);
        return send(200, { id: recordId });
      }
      return send(405, { code: 10405, message: "Method not allowed" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
