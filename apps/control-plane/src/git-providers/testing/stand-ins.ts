/**
 * Test stand-ins for GitHub, GitLab, Gitea and Bitbucket Cloud: one HTTP server on 127.0.0.1 per
 * provider speaking the part of its documented REST API the clients use (response shapes as the
 * providers document them), and serving Git over smart HTTP from local bare repositories through
 * `git http-backend` (the agent's git-server helper) that requires the provider's token:
 * /<owner>/<repo>.git/... is forwarded to the repository <repo>.
 */
import { execFile } from "node:child_process";
import { createPublicKey } from "node:crypto";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { jwtVerify } from "jose";

const run = promisify(execFile);

export type Kind = "github" | "gitlab" | "gitea" | "bitbucket";

export interface StandIn {
  kind: Kind;
  baseUrl: string;
  git: GitServer;
  /** The token that currently opens the API and the repositories. */
  token: string;
  /** Requests seen, as "METHOD path". */
  requests: string[];
  /** Comments on pull/merge requests by id: the request's number and every body it had, in order. */
  comments: Map<string, { number: string; bodies: string[] }>;
  /** Users the repository's collaborator check accepts (login, GitLab user id, Bitbucket uuid). */
  collaborators: Set<string>;
  close(): Promise<void>;
}

export interface StandInOptions {
  kind: Kind;
  /** Username git must send with the token (x-access-token, oauth2, x-bitbucket-api-token-auth). */
  gitUsername: string;
  token: string;
  /** GitHub: the app's id and public key (PEM) that verify the JWT. */
  githubAppId?: number;
  githubPublicKeyPem?: string;
  /** GitLab/Gitea: refresh token accepted, new access token handed out for it. */
  refreshToken?: string;
  /** Bitbucket: e-mail of the API token. */
  email?: string;
  /** The password git requires, when not `token` (GitLab: only the refreshed token opens it). */
  gitPassword?: string;
  /** OAuth authorization code accepted by the token endpoint. */
  code?: string;
}

async function branchesOf(git: GitServer, repo: string): Promise<{ name: string; sha: string }[]> {
  const { stdout } = await run("git", [
    "--git-dir",
    path.join(git.root, `${repo}.git`),
    "for-each-ref",
    "refs/heads",
    "--format=%(refname:short) %(objectname)",
  ]);
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name, sha] = line.split(" ");
      return { name: name!, sha: sha! };
    });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startStandIn(options: StandInOptions): Promise<StandIn> {
  const git = await startGitServer({
    username: options.gitUsername,
    password: options.gitPassword ?? options.token,
  });
  const state = { token: options.token };
  const requests: string[] = [];
  const comments = new Map<string, { number: string; bodies: string[] }>();
  const collaborators = new Set<string>();
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const bearerOk = (req: IncomingMessage) => req.headers.authorization === `Bearer ${state.token}`;

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const p = url.pathname;
    const m = req.method;
    if (options.kind === "github") {
      const install = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(p);
      if (m === "POST" && install) {
        const jwt = (req.headers.authorization ?? "").replace(/^Bearer /, "");
        try {
          const key = createPublicKey(options.githubPublicKeyPem!);
          const { payload } = await jwtVerify(jwt, key, { algorithms: ["RS256"] });
          if (payload.iss !== String(options.githubAppId)) throw new Error("iss");
        } catch {
          return json(res, 401, { message: "A JSON web token could not be decoded" });
        }
        return json(res, 201, {
          token: state.token,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        });
      }
      if (!bearerOk(req)) return json(res, 401, { message: "Bad credentials" });
      if (m === "GET" && p === "/installation/repositories") {
        return json(res, 200, {
          total_count: 1,
          repositories: [
            {
              id: 1,
              name: "web",
              full_name: "acme/web",
              private: true,
              owner: { login: "acme" },
              default_branch: "main",
            },
          ],
        });
      }
      const branches = /^\/repos\/acme\/(\w+)\/branches$/.exec(p);
      if (m === "GET" && branches) {
        return json(
          res,
          200,
          (await branchesOf(git, branches[1]!)).map((b) => ({
            name: b.name,
            commit: { sha: b.sha },
            protected: false,
          })),
        );
      }
    }
    if (options.kind === "gitlab" || options.kind === "gitea") {
      const tokenPath = options.kind === "gitlab" ? "/oauth/token" : "/login/oauth/access_token";
      if (m === "POST" && p === tokenPath) {
        const raw = await readBody(req);
        const fields =
          options.kind === "gitlab"
            ? Object.fromEntries(new URLSearchParams(raw))
            : (JSON.parse(raw) as Record<string, string>);
        const good =
          (fields.grant_type === "refresh_token" && fields.refresh_token === options.refreshToken) ||
          (fields.grant_type === "authorization_code" && fields.code === options.code);
        if (!good)
          return json(res, 400, {
            error: "invalid_grant",
            error_description: "The provided grant is invalid",
          });
        state.token = `${options.token}-renewed`;
        return json(res, 200, {
          access_token: state.token,
          token_type: "Bearer",
          refresh_token: `${options.refreshToken}-next`,
          expires_in: 7200,
          created_at: Math.floor(Date.now() / 1000),
        });
      }
      if (!bearerOk(req)) return json(res, 401, { message: "401 Unauthorized" });
      if (options.kind === "gitlab" && m === "GET" && p === "/api/v4/projects") {
        return json(res, 200, [
          {
            id: 7,
            name: "web",
            path: "web",
            path_with_namespace: "acme/web",
            namespace: { path: "acme", full_path: "acme", kind: "group" },
            default_branch: "main",
          },
        ]);
      }
      if (options.kind === "gitlab" && m === "GET" && p === "/api/v4/projects/7/repository/branches") {
        return json(
          res,
          200,
          (await branchesOf(git, "web")).map((b) => ({ name: b.name, commit: { id: b.sha } })),
        );
      }
      if (options.kind === "gitea" && m === "GET" && p === "/api/v1/user/repos") {
        return json(res, 200, [
          {
            id: 3,
            name: "web",
            full_name: "acme/web",
            owner: { login: "acme" },
            default_branch: "main",
            private: true,
          },
        ]);
      }
      if (options.kind === "gitea" && m === "GET" && p === "/api/v1/repos/acme/web/branches") {
        return json(
          res,
          200,
          (await branchesOf(git, "web")).map((b) => ({ name: b.name, commit: { id: b.sha } })),
        );
      }
    }
    if (options.kind === "bitbucket") {
      const basic = `Basic ${Buffer.from(`${options.email}:${state.token}`).toString("base64")}`;
      if (req.headers.authorization !== basic)
        return json(res, 401, { type: "error", error: { message: "Unauthorized" } });
      if (m === "GET" && p === "/2.0/repositories/acme") {
        return json(res, 200, {
          pagelen: 100,
          values: [
            {
              uuid: "{1}",
              name: "web",
              slug: "web",
              full_name: "acme/web",
              workspace: { slug: "acme" },
              mainbranch: { name: "main" },
            },
          ],
        });
      }
      if (m === "GET" && p === "/2.0/repositories/acme/web/refs/branches") {
        return json(res, 200, {
          values: (await branchesOf(git, "web")).map((b) => ({ name: b.name, target: { hash: b.sha } })),
        });
      }
    }
    const commented = await commentApi(req, res, p);
    if (commented) return;
    json(res, 404, { message: "Not Found" });
  }

  /**
   * Request comments and the collaborator check, as each provider documents them (GitHub and
   * Gitea: issue comments and collaborators; GitLab: merge request notes and project members;
   * Bitbucket: pull request comments and repository user permissions), for acme/web.
   */
  async function commentApi(req: IncomingMessage, res: ServerResponse, p: string): Promise<boolean> {
    const m = req.method;
    const patterns: Record<Kind, { create: RegExp; edit: RegExp; member: RegExp }> = {
      github: {
        create: /^\/repos\/acme\/web\/issues\/(\d+)\/comments$/,
        edit: /^\/repos\/acme\/web\/issues\/comments\/(\d+)$/,
        member: /^\/repos\/acme\/web\/collaborators\/([^/]+)$/,
      },
      gitea: {
        create: /^\/api\/v1\/repos\/acme\/web\/issues\/(\d+)\/comments$/,
        edit: /^\/api\/v1\/repos\/acme\/web\/issues\/comments\/(\d+)$/,
        member: /^\/api\/v1\/repos\/acme\/web\/collaborators\/([^/]+)$/,
      },
      gitlab: {
        create: /^\/api\/v4\/projects\/(?:7|acme%2Fweb)\/merge_requests\/(\d+)\/notes$/,
        edit: /^\/api\/v4\/projects\/(?:7|acme%2Fweb)\/merge_requests\/\d+\/notes\/(\d+)$/,
        member: /^\/api\/v4\/projects\/(?:7|acme%2Fweb)\/members\/all\/([^/]+)$/,
      },
      bitbucket: {
        create: /^\/2\.0\/repositories\/acme\/web\/pullrequests\/(\d+)\/comments$/,
        edit: /^\/2\.0\/repositories\/acme\/web\/pullrequests\/\d+\/comments\/(\d+)$/,
        member: /^\/2\.0\/repositories\/acme\/web\/permissions-config\/users\/([^/]+)$/,
      },
    };
    const pattern = patterns[options.kind];
    const bodyOf = async () => {
      const raw = JSON.parse(await readBody(req)) as { body?: string; content?: { raw?: string } };
      return options.kind === "bitbucket" ? (raw.content?.raw ?? "") : (raw.body ?? "");
    };
    const create = pattern.create.exec(p);
    if (m === "POST" && create) {
      const id = String(comments.size + 1001);
      comments.set(id, { number: create[1]!, bodies: [await bodyOf()] });
      json(res, 201, { id: Number(id) });
      return true;
    }
    const edit = pattern.edit.exec(p);
    const editMethod = options.kind === "gitlab" || options.kind === "bitbucket" ? "PUT" : "PATCH";
    if (m === editMethod && edit) {
      const comment = comments.get(edit[1]!);
      if (!comment) {
        json(res, 404, { message: "Not Found" });
        return true;
      }
      comment.bodies.push(await bodyOf());
      json(res, 200, { id: Number(edit[1]) });
      return true;
    }
    const member = pattern.member.exec(p);
    if (m === "GET" && member) {
      const user = decodeURIComponent(member[1]!);
      if (!collaborators.has(user)) {
        json(res, 404, { message: "Not Found" });
        return true;
      }
      if (options.kind === "github" || options.kind === "gitea") {
        res.writeHead(204);
        res.end();
      } else if (options.kind === "gitlab") {
        json(res, 200, { id: Number(user), access_level: 30 });
      } else {
        json(res, 200, { permission: "write", user: { uuid: user } });
      }
      return true;
    }
    return false;
  }

  const gitUrl = new URL(git.baseUrl);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(`${req.method} ${url.pathname}`);
    const repo = /^\/[^/]+\/([A-Za-z0-9._-]+\.git)(\/.*)$/.exec(url.pathname);
    if (repo) {
      const forward = request(
        {
          host: gitUrl.hostname,
          port: gitUrl.port,
          method: req.method,
          path: `/${repo[1]}${repo[2]}${url.search}`,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
      forward.on("error", () => res.destroy());
      return;
    }
    api(req, res, url).catch(() => json(res, 500, { message: "stand-in failed" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    kind: options.kind,
    baseUrl,
    git,
    get token() {
      return state.token;
    },
    requests,
    comments,
    collaborators,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await git.close();
    },
  };
}
