/**
 * admin (spec 4.9): instance administration. admin.setupMonitoring sets up the monitoring of
 * the control plane's own machine (server `local`), which belongs to the instance
 * administrator; self-hosted edition only.
 */

import { z } from "zod";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { forbidden } from "../errors.ts";
import { metricsConfigSchema, setupMonitoring } from "../monitoring/monitoring-config.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { defineRouter, mutation } from "../procedure.ts";

export const adminRouter = defineRouter("admin", {
  setupMonitoring: mutation({
    summary: "Collect and serve this machine's metrics with `metricsConfig` (applied live)",
    access: "admin",
    editions: ["self-hosted"],
    input: z.object({ metricsConfig: metricsConfigSchema }),
    output: z.object({ success: z.boolean(), message: z.string() }),
    handler: async ({ ctx, caller, input, logger }) => {
      if (!(await isInstanceAdmin(ctx.db, caller))) {
        throw forbidden(
          "This machine's monitoring belongs to the instance administrator; use server.setupMonitoring",
        );
      }
      const { port } = await setupMonitoring(
        ctx,
        caller.organizationId,
        LOCAL_SERVER_ID,
        input.metricsConfig,
        logger,
      );
      return { success: true, message: `Monitoring runs; metrics are served on port ${port}` };
    },
  }),
});
