/**
 * Docker image references (`[domain[:port]/]path[:tag][@digest]`), checked with the grammar of
 * the engine's reference package (distribution/reference) so that a reference the engine would
 * refuse is refused before anything is changed.
 */
const alphanumeric = "[a-z0-9]+";
const separator = "(?:[._]|__|[-]+)";
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const name = `(?:${host}(?::[0-9]+)?/)?${pathComponent}(?:/${pathComponent})*`;
const tag = "[\\w][\\w.-]{0,127}";
const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
const REFERENCE = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);
const MAX_NAME_LENGTH = 255;

export function isImageReference(reference: unknown): reference is string {
  if (typeof reference !== "string") return false;
  const match = REFERENCE.exec(reference);
  return match !== null && (match[1] ?? "").length <= MAX_NAME_LENGTH;
}
