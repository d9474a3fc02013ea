/**
 * libsql (issue 41, Dokploy's libsql router): a sqld service, primary or replica. The procedures
 * are the database kinds' (databases/router.ts) less changePassword and search, with
 * saveExternalPorts for sqld's HTTP, gRPC and admin ports; the rest is in databases/kinds.ts.
 */
import { databaseRouter } from "../databases/router.ts";

export const libsqlRouter = databaseRouter("libsql");
