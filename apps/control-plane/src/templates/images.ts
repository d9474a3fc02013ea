/**
 * PLATFORM_TEMPLATE_IMAGES: images of the templates replaced by others, for operators who mirror
 * images in their own registry (or run air-gapped). `from=to` pairs separated by commas, or a
 * JSON object `{"from": "to"}`. A `from` with a tag or digest replaces exactly that image; a
 * `from` without one replaces the repository and keeps the template's tag or digest
 * (`postgres=mirror.example.com/postgres` turns `postgres:16` into
 * `mirror.example.com/postgres:16`). `postgres`, `library/postgres` and
 * `docker.io/library/postgres` name the same repository.
 */

export type ImageOverrides = ReadonlyMap<string, string>;

const IMAGE_REFERENCE = /^[a-z0-9][a-z0-9._/:@-]*$/i;

/** Splits `repo[:tag][@digest]` (a `:` after the last `/` is a tag, before it a registry port). */
function splitReference(image: string): { repository: string; suffix: string } {
  const at = image.indexOf("@");
  const withoutDigest = at === -1 ? image : image.slice(0, at);
  const digest = at === -1 ? "" : image.slice(at);
  const colon = withoutDigest.lastIndexOf(":");
  if (colon > withoutDigest.lastIndexOf("/")) {
    return { repository: withoutDigest.slice(0, colon), suffix: withoutDigest.slice(colon) + digest };
  }
  return { repository: withoutDigest, suffix: digest };
}

/** One spelling of a Docker Hub repository: `postgres` for `docker.io/library/postgres`. */
function canonicalRepository(repository: string): string {
  const lower = repository.toLowerCase();
  const short = lower.replace(/^(docker\.io|index\.docker\.io|registry-1\.docker\.io)\//, "");
  return short.startsWith("library/") ? short.slice("library/".length) : short;
}

function canonicalImage(image: string): string {
  const { repository, suffix } = splitReference(image);
  return canonicalRepository(repository) + suffix;
}

/** Parses the setting; answers the overrides or the problem naming the bad entry. */
export function parseImageOverrides(text: string): { overrides: ImageOverrides } | { problem: string } {
  const pairs: [string, string][] = [];
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return { problem: "is not valid JSON" };
    }
    for (const [from, to] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof to !== "string")
        return { problem: `the image for ${JSON.stringify(from)} must be a string` };
      pairs.push([from, to]);
    }
  } else {
    for (const entry of trimmed.split(",").map((part) => part.trim())) {
      if (entry === "") continue;
      const equals = entry.indexOf("=");
      if (equals === -1) return { problem: `${JSON.stringify(entry)} is not from=to` };
      pairs.push([entry.slice(0, equals).trim(), entry.slice(equals + 1).trim()]);
    }
  }
  const overrides = new Map<string, string>();
  for (const [from, to] of pairs) {
    for (const image of [from, to]) {
      if (!IMAGE_REFERENCE.test(image) || image.length > 512) {
        return { problem: `${JSON.stringify(image)} is not a Docker image reference` };
      }
    }
    overrides.set(canonicalImage(from), to);
  }
  return { overrides };
}

/** The image to run in place of `image`, or `image` itself when no override names it. */
export function overrideImage(image: string, overrides: ImageOverrides | undefined): string {
  if (!overrides || overrides.size === 0) return image;
  const exact = overrides.get(canonicalImage(image));
  if (exact !== undefined) return exact;
  const { repository, suffix } = splitReference(image);
  const mirror = overrides.get(canonicalRepository(repository));
  if (mirror === undefined) return image;
  // A replacement that names its own tag or digest is used as it is.
  return splitReference(mirror).suffix === "" ? mirror + suffix : mirror;
}
