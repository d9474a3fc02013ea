/** A redirect as the API answers it (redirects.one, application.one). */
import { z } from "zod";

export const redirectSchema = z.object({
  redirectId: z.string(),
  applicationId: z.string(),
  regex: z.string(),
  replacement: z.string(),
  permanent: z.boolean(),
  uniqueConfigKey: z.number().int(),
  createdAt: z.string(),
});
