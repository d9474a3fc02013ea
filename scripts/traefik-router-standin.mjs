/**
 * A routing stand-in for Traefik v3 in tests (no Traefik image can be pulled here), bundled with
 * its YAML parser by scripts/build-traefik-router-image.sh. It takes Traefik's command line
 * (`traefik --configFile=<file>`), reads the static configuration's entry points and file
 * provider directory, and serves plain HTTP on every entry point: each request is matched against
 * the HTTP routers of the dynamic files (read again on every request, as Traefik's `watch` would
 * see them) and proxied to the first server of the router's load balancer, the Host header kept.
 * What it understands of a rule: Host, Path, PathPrefix and Method with &&, ||, ! and
 * parentheses; a router with anything else is skipped (and logged). No TLS; of the middlewares
 * only forwardAuth, as Traefik's: the request's headers (with X-Forwarded-Method, -Proto, -Host,
 * -Uri and -For) go in a GET to its address; a 2xx answer lets the request through with the
 * answer's authResponseHeaders added, any other answer (status, headers, body) is the client's.
 * Other middlewares are ignored. A stand-in for routing by host, not a proxy to run anything on.
 * One difference in how it reaches a server: a Swarm service's name resolves to its virtual IP,
 * which only answers where the kernel has IPVS, and the test machine's has not; so a server's
 * host name is looked up as `tasks.<name>` first (Docker's DNS name of the same service's tasks,
 * on the same network), then as itself; a name with several tasks (copies of a service) gives
 * one of them at random for each new connection.
 * Connections to servers are kept alive and reused, as Traefik's are. A request that fails before
 * any answer because its server is not there (connection refused) or because the server closed
 * the reused keep-alive connection it was sent on is sent again (up to 3 attempts, on a new
 * connection, so possibly to another copy): Go's HTTP transport retries a request on a closed
 * idle connection and Traefik's retry middleware (the platform-api route of deploy/install.sh)
 * one its server refused; its body is held for that.
 */
import { lookup } from "node:dns/promises";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { parse } from "yaml";

let configFile = "/etc/traefik/traefik.yml";
for (const argument of process.argv.slice(2)) {
  if (argument === "traefik") continue;
  const [flag, value] = argument.split(/=(.*)/s);
  if (flag.toLowerCase() === "--configfile") configFile = value;
  else if (!flag.startsWith("--")) {
    console.error(`traefik router stand-in: unexpected argument: ${argument}`);
    process.exit(2);
  }
}

let staticConfig;
try {
  staticConfig = parse(readFileSync(configFile, "utf8")) ?? {};
} catch (error) {
  console.error(
    `traefik router stand-in: cannot read the configuration file ${configFile}: ${error.message}`,
  );
  process.exit(1);
}
const dynamicDirectory = staticConfig.providers?.file?.directory;
const entryPoints = Object.entries(staticConfig.entryPoints ?? {});
if (entryPoints.length === 0) {
  console.error("traefik router stand-in: the static configuration has no entryPoints");
  process.exit(1);
}

/** The dynamic files' HTTP routers and services, merged (later files win on equal names). */
function loadDynamic() {
  const routers = {};
  const services = {};
  const middlewares = {};
  let names = [];
  try {
    names = readdirSync(dynamicDirectory).filter((name) => /\.ya?ml$/.test(name));
  } catch {}
  for (const name of names.sort()) {
    try {
      const config = parse(readFileSync(path.join(dynamicDirectory, name), "utf8")) ?? {};
      Object.assign(routers, config.http?.routers ?? {});
      Object.assign(services, config.http?.services ?? {});
      Object.assign(middlewares, config.http?.middlewares ?? {});
    } catch (error) {
      console.log(`skipping ${name}: ${error.message}`);
    }
  }
  return { routers, services, middlewares };
}

/** Splits a rule into tokens: names, strings, ( ) , && || !. */
function tokenize(rule) {
  const tokens = [];
  const pattern = /\s*(?:(&&|\|\||[()!,])|`([^`]*)`|"((?:[^"\\]|\\.)*)"|([A-Za-z]+))/y;
  let at = 0;
  while (at < rule.length) {
    if (/^\s*$/.test(rule.slice(at))) break;
    pattern.lastIndex = at;
    const match = pattern.exec(rule);
    if (!match) throw new Error(`cannot read the rule at: ${rule.slice(at)}`);
    at = pattern.lastIndex;
    if (match[1]) tokens.push({ op: match[1] });
    else if (match[4]) tokens.push({ name: match[4] });
    else tokens.push({ string: match[2] ?? JSON.parse(`"${match[3]}"`) });
  }
  return tokens;
}

const MATCHERS = {
  Host: (request, host) => request.host === host.toLowerCase(),
  Path: (request, value) => request.path === value,
  PathPrefix: (request, prefix) => request.path.startsWith(prefix),
  Method: (request, method) => request.method === method.toUpperCase(),
};

/** A predicate of a request ({host, path, method}) for a rule; throws on what it does not know. */
function compileRule(rule) {
  const tokens = tokenize(rule);
  let index = 0;
  const peek = () => tokens[index];
  const expect = (op) => {
    if (tokens[index]?.op !== op) throw new Error(`expected ${op} in ${rule}`);
    index++;
  };
  const primary = () => {
    const token = tokens[index++];
    if (token?.op === "!") {
      const inner = primary();
      return (request) => !inner(request);
    }
    if (token?.op === "(") {
      const inner = or();
      expect(")");
      return inner;
    }
    if (!token?.name || !MATCHERS[token.name]) throw new Error(`unsupported matcher in ${rule}`);
    const matcher = MATCHERS[token.name];
    expect("(");
    const values = [];
    while (peek()?.string !== undefined) {
      values.push(tokens[index++].string);
      if (peek()?.op === ",") index++;
    }
    expect(")");
    return (request) => values.some((value) => matcher(request, value));
  };
  const and = () => {
    let left = primary();
    while (peek()?.op === "&&") {
      index++;
      const [first, second] = [left, primary()];
      left = (request) => first(request) && second(request);
    }
    return left;
  };
  const or = () => {
    let left = and();
    while (peek()?.op === "||") {
      index++;
      const [first, second] = [left, and()];
      left = (request) => first(request) || second(request);
    }
    return left;
  };
  const predicate = or();
  if (index !== tokens.length) throw new Error(`unexpected text after the rule: ${rule}`);
  return predicate;
}

/** The upstream URL and forwardAuth middlewares of the best router for the request on `entryPoint`, or undefined. */
function route(entryPoint, request) {
  const { routers, services, middlewares } = loadDynamic();
  let best;
  for (const [name, router] of Object.entries(routers)) {
    if (router.entryPoints && !router.entryPoints.includes(entryPoint)) continue;
    let matches;
    try {
      matches = compileRule(String(router.rule ?? ""))(request);
    } catch (error) {
      console.log(`router ${name} skipped: ${error.message}`);
      continue;
    }
    if (!matches) continue;
    const priority = router.priority || String(router.rule).length;
    if (!best || priority > best.priority) best = { name, router, priority };
  }
  if (!best) return undefined;
  const servers = services[best.router.service]?.loadBalancer?.servers ?? [];
  if (!servers[0]?.url) return undefined;
  const forwardAuths = (best.router.middlewares ?? [])
    .map((name) => middlewares[String(name).replace(/@file$/, "")]?.forwardAuth)
    .filter(Boolean);
  return { url: servers[0].url, forwardAuths };
}

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "content-length",
];

/** Asks each forwardAuth in turn; undefined when all let the request through (headers then updated). */
function authorize(request, headers, forwardAuths) {
  return forwardAuths.reduce(
    (previous, forwardAuth) =>
      previous.then((refused) => {
        if (refused) return refused;
        const authHeaders = { ...headers };
        for (const name of HOP_BY_HOP) delete authHeaders[name];
        Object.assign(authHeaders, {
          "x-forwarded-method": request.method,
          "x-forwarded-uri": request.url ?? "/",
          "x-forwarded-host": request.headers.host ?? "",
        });
        return new Promise((resolve) => {
          const asked = http.request(
            forwardAuth.address,
            { method: "GET", headers: authHeaders, lookup: lookupTasksFirst },
            (answer) => {
              const chunks = [];
              answer.on("data", (chunk) => chunks.push(chunk));
              answer.on("end", () => {
                const status = answer.statusCode ?? 500;
                if (status >= 200 && status < 300) {
                  for (const name of forwardAuth.authResponseHeaders ?? []) {
                    const value = answer.headers[name.toLowerCase()];
                    if (value !== undefined) headers[name.toLowerCase()] = value;
                  }
                  resolve(undefined);
                } else {
                  resolve({ status, headers: answer.headers, body: Buffer.concat(chunks) });
                }
              });
            },
          );
          asked.on("error", (error) => {
            console.log(`forwardAuth ${forwardAuth.address}: ${error.message}`);
            resolve({ status: 500, headers: {}, body: Buffer.from("Internal Server Error\n") });
          });
          asked.end();
        });
      }),
    Promise.resolve(undefined),
  );
}

/** dns.lookup for http.request: `tasks.<name>` when Docker's DNS knows it, else `<name>`; one address at random. */
function lookupTasksFirst(hostname, options, callback) {
  const all = { ...options, all: true };
  lookup(`tasks.${hostname}`, all)
    .catch(() => lookup(hostname, all))
    .then((addresses) => {
      const chosen = addresses[Math.floor(Math.random() * addresses.length)];
      if (!chosen) throw Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" });
      if (options.all) callback(null, [chosen]);
      else callback(null, chosen.address, chosen.family);
    })
    .catch((error) => callback(error));
}

const upstreamAgent = new http.Agent({ keepAlive: true });
const ATTEMPTS = 3;

/** Whether a request that failed before its answer can be sent again (see the header). */
function retryable(error, reusedSocket) {
  if (error.code === "ECONNREFUSED" || error.code === "EHOSTUNREACH") return true;
  return reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE");
}

/** Sends the request (its body held in `body`) to `target`, again on a failure `retryable` allows. */
function forward(request, response, target, headers, body, attempt) {
  const forwarded = http.request(
    target,
    { agent: upstreamAgent, lookup: lookupTasksFirst, method: request.method, headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  forwarded.on("error", (error) => {
    if (!response.headersSent && attempt < ATTEMPTS && retryable(error, forwarded.reusedSocket)) {
      console.log(`${request.method} ${request.url} -> ${target}: ${error.code}; sent again`);
      setTimeout(() => forward(request, response, target, headers, body, attempt + 1), 50 * attempt);
      return;
    }
    console.log(`${request.method} ${request.url} -> ${target}: ${error.message}`);
    if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
    response.end("Bad Gateway\n");
  });
  forwarded.end(body.length > 0 ? body : undefined);
}

for (const [entryPoint, { address }] of entryPoints) {
  const port = Number(
    String(address ?? "")
      .split(":")
      .at(-1),
  );
  const server = http.createServer((request, response) => {
    const host = (request.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const url = new URL(request.url ?? "/", "http://stand-in");
    const routed = route(entryPoint, { host, path: url.pathname, method: request.method });
    if (!routed) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      response.end("404 page not found\n");
      return;
    }
    const target = new URL(request.url ?? "/", routed.url);
    const headers = {
      ...request.headers,
      "x-forwarded-for": request.socket.remoteAddress ?? "",
      "x-forwarded-host": request.headers.host ?? "",
      "x-forwarded-proto": "http",
    };
    // The client's keep-alive is its own; the server connection's is the agent's.
    delete headers.connection;
    delete headers["keep-alive"];
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () =>
      authorize(request, headers, routed.forwardAuths).then((refused) => {
        if (!refused) return forward(request, response, target, headers, Buffer.concat(chunks), 1);
        const answerHeaders = { ...refused.headers };
        for (const name of HOP_BY_HOP) delete answerHeaders[name];
        response.writeHead(refused.status, answerHeaders);
        response.end(refused.body);
      }),
    );
  });
  server.listen(port, () => console.log(`traefik router stand-in: entry point ${entryPoint} on :${port}`));
}

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
