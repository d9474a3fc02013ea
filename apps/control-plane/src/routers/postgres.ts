/**
 * postgres (spec 4.14, fields of 2.9): a postgres database service. The procedures are the same for the
 * six database kinds (databases/router.ts); what is particular to postgres is in databases/kinds.ts.
 */
import { databaseRouter } from "../databases/router.ts";

export const postgresRouter = databaseRouter("postgres");
