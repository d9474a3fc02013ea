/**
 * redis (spec 4.14, fields of 2.9): a redis database service. The procedures are the same for the
 * six database kinds (databases/router.ts); what is particular to redis is in databases/kinds.ts.
 */
import { databaseRouter } from "../databases/router.ts";

export const redisRouter = databaseRouter("redis");
