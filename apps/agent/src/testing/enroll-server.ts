/**
 * Test helper: a tiny HTTP server on 127.0.0.1 that speaks the control plane's enrollment
 * endpoint (POST /api/agent.enroll {enrollmentToken, publicKey, hostname, agentVersion} ->
 * {serverId, natsUrl, userJwt}), accepting one token and counting the requests it gets.
 */
import { createServer, type Server } from "node:http";

export interface EnrollRequestBody {
  enrollmentToken: string;
  publicKey: string;
  hostname: string;
  agentVersion: string;
}

export interface TestEnrollServer {
  url: string;
  requests: EnrollRequestBody[];
  close(): Promise<void>;
}

export async function startEnrollServer(options: {
  token: string;
  serverId: string;
  natsUrl: string;
  signJwt: (serverId: string, publicKey: string) => Promise<string>;
}): Promise<TestEnrollServer> {
  const requests: EnrollRequestBody[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method !== "POST" || request.url !== "/api/agent.enroll") {
      return answer(404, { error: { message: "not found", code: "NOT_FOUND" } });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as EnrollRequestBody;
    requests.push(body);
    if (body.enrollmentToken !== options.token) {
      return answer(401, { error: { message: "invalid or used enrollment token", code: "UNAUTHORIZED" } });
    }
    try {
      const userJwt = await options.signJwt(options.serverId, body.publicKey);
      answer(200, { serverId: options.serverId, natsUrl: options.natsUrl, userJwt });
    } catch {
      answer(400, { error: { message: "invalid public key", code: "BAD_REQUEST" } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
