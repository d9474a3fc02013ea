/**
 * ssh2, loaded on first use (a key check, a key pair, server.setup): an idle control plane never
 * needs its code, which costs about 13 MiB of memory and some start time when imported eagerly.
 */
import { createRequire } from "node:module";

type Ssh2 = typeof import("ssh2");

const require = createRequire(import.meta.url);
let loaded: Ssh2 | undefined;

export function ssh2(): Ssh2 {
  loaded ??= require("ssh2") as Ssh2;
  return loaded;
}
