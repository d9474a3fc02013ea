/**
 * mariadb (spec 4.14, fields of 2.9): a mariadb database service. The procedures are the same for the
 * six database kinds (databases/router.ts); what is particular to mariadb is in databases/kinds.ts.
 */
import { databaseRouter } from "../databases/router.ts";

export const mariadbRouter = databaseRouter("mariadb");
