/** The names of the images the platform builds for applications. */

/** Docker repository names are lowercase `[a-z0-9]` words joined by `.`, `_` or `-`. */
export function imageRepositoryOf(appName: string): string {
  const name = appName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return name || "app";
}

/** `platform/<appName>:<deploymentId>` (a tag may not start with `-` or `.`). */
export function imageNameFor(appName: string, deploymentId: string): string {
  const tag = /^\w/.test(deploymentId) ? deploymentId : `d${deploymentId}`;
  return `platform/${imageRepositoryOf(appName)}:${tag}`;
}
