/**
 * A stand-in for oauth2-proxy in forward-auth tests (no image can be pulled here), built into
 * platform-test/forward-auth:latest by scripts/build-forward-auth-standin-image.sh. It reads the
 * variables the platform configures oauth2-proxy with: it listens on OAUTH2_PROXY_HTTP_ADDRESS
 * and, as oauth2-proxy in its static-upstream mode behind Traefik's forwardAuth, answers every
 * request 202 (with X-Auth-Request-User and -Email) when it carries a session, 401 otherwise.
 * Its one rule for a session, in place of an OIDC sign-in: the cookie `_oauth2_proxy` equal to
 * OAUTH2_PROXY_CLIENT_SECRET (so a test also proves the secret reached the service). GET /ping
 * answers 200 (oauth2-proxy's health path).
 */
import http from "node:http";

const address = process.env.OAUTH2_PROXY_HTTP_ADDRESS ?? "0.0.0.0:4180";
const secret = process.env.OAUTH2_PROXY_CLIENT_SECRET ?? "";
const port = Number(address.split(":").at(-1));
if (!secret) {
  console.error("forward-auth stand-in: OAUTH2_PROXY_CLIENT_SECRET is not set");
  process.exit(1);
}

function session(cookieHeader) {
  for (const part of String(cookieHeader ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === "_oauth2_proxy") return value.join("=");
  }
  return undefined;
}

http
  .createServer((request, response) => {
    if (request.url === "/ping") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("OK");
      return;
    }
    const uri = request.headers["x-forwarded-uri"] ?? request.url;
    if (session(request.headers.cookie) === secret) {
      console.log(`202 ${request.headers["x-forwarded-host"] ?? ""}${uri}`);
      response.writeHead(202, {
        "x-auth-request-user": "stand-in-user",
        "x-auth-request-email": "stand-in-user@example.com",
      });
      response.end();
      return;
    }
    console.log(`401 ${request.headers["x-forwarded-host"] ?? ""}${uri}`);
    response.writeHead(401, { "content-type": "text/plain; charset=utf-8" });
    response.end("Unauthorized (forward-auth stand-in)\n");
  })
  .listen(port, () => console.log(`forward-auth stand-in on :${port}`));

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
