/** What each audit fact reads: the host's files, its installed packages and its services. */
import type { HostFiles } from "./host-files.ts";
import type { ServiceProbe } from "./services.ts";

export interface AuditContext {
  files: HostFiles;
  services: ServiceProbe;
  installedPackages: Set<string>;
}
