import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connectAgentNats, enrollAgent, type RunningAgent, startAgent } from "@platform/agent";
import { NatsAgentTransport } from "@platform/agent-protocol";
import { type Session, startTestPlatform, type TestPlatform } from "../../testing/harness.ts";
import { insertTestServer, listen } from "./agents.ts";
import { startJwtNats } from "./nats-jwt.ts";

/**
 * A control plane on NATS with JWT auth, and a remote server of `ownerOf`'s organization whose
 * agent is enrolled over it with a main directory of its own (beside this machine's).
 */
export interface RemoteAgentPlatform {
  platform: TestPlatform;
  /** The session `ownerOf` answered: the remote server's organization's member. */
  session: Session;
  serverId: string;
  /** The remote server's agent (a test may stop it; close stops it again harmlessly). */
  agent: RunningAgent;
  localMain: string;
  remoteMain: string;
  close(): Promise<void>;
}

export async function startRemoteAgentPlatform(
  ownerOf: (platform: TestPlatform) => Promise<Session>,
): Promise<RemoteAgentPlatform> {
  const nats = await startJwtNats();
  const localMain = await mkdtemp(path.join(tmpdir(), "cp-remote-local-"));
  const remoteMain = await mkdtemp(path.join(tmpdir(), "cp-remote-main-"));
  const platform = await startTestPlatform(nats.env, {
    agents: { localAgent: { mainDirectory: localMain } },
  });
  const http = await listen(platform);
  const session = await ownerOf(platform);
  const serverId = await insertTestServer(platform, session.user.organizationId, "edge");
  const { token } = await platform.ctx.agents.createEnrollmentToken(serverId);
  const enrollment = await enrollAgent({
    controlPlaneUrl: http.url,
    enrollmentToken: token,
    stateDir: remoteMain,
  });
  const connection = await connectAgentNats({ ...enrollment, natsUrl: enrollment.natsUrl });
  const agent = await startAgent({
    serverId,
    transport: new NatsAgentTransport(connection),
    mainDirectory: remoteMain,
  });
  return {
    platform,
    session,
    serverId,
    agent,
    localMain,
    remoteMain,
    close: async () => {
      await agent.stop();
      await connection.close();
      await http.close();
      await platform.close();
      await nats.stop();
      for (const directory of [localMain, remoteMain]) await rm(directory, { recursive: true, force: true });
    },
  };
}
