/** The agent's version, reported in pings, heartbeats and enrollment. */
export const AGENT_VERSION = "0.1.0";
