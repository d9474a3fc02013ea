/**
 * The CLI builders a server's setup installs (deploy/agent/install.sh, section "builders"):
 * their pinned versions, and the one sentence that tells what to do when one is missing, said
 * by a deploy that needs it and by server.validate beforehand. tests/install/builders.test.ts
 * checks that install.sh pins the same versions.
 */
export const PINNED_BUILDERS = { nixpacks: "1.39.0", railpack: "0.15.4" } as const;

export type PinnedBuilder = keyof typeof PINNED_BUILDERS;

/** The executables of the CLI build types (pack serves both buildpack types). */
export type BuilderTool = PinnedBuilder | "pack";

/** What to do when `tool` is not on a server: the fix named by deploys and server.validate. */
export function builderFix(tool: BuilderTool): string {
  if (tool === "pack") {
    return "install pack (the Cloud Native Buildpacks CLI) on the server by hand, add a Dockerfile or choose another build type";
  }
  return (
    `run server.setup again where the server reaches the builders' release host (PLATFORM_BUILDERS_URL, GitHub by default): ` +
    `it installs ${tool} ${PINNED_BUILDERS[tool]} after checking its sha256; or install ${tool} by hand, add a Dockerfile or choose another build type`
  );
}
