/**
 * The built entry points (scripts/build.mjs) that tests start as processes: the control plane and
 * the agent as `npm start` and the agent's bootstrap run them, with plain `node` and no
 * TypeScript loader, which also saves each start the compilation of the sources (about 2 s of
 * CPU for the control plane). The tests' global setup builds them when a source is newer.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

export const CONTROL_PLANE_ENTRY = path.join(root, "dist/control-plane/main.js");
export const AGENT_ENTRY = path.join(root, "dist/agent/main.js");
