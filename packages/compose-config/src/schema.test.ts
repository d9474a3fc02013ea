import { describe, expect, it } from "vitest";
import { ComposeFileError } from "./errors.ts";
import { parseComposeFile, validateComposeDocument } from "./schema.ts";

function issuesOf(text: string) {
  try {
    parseComposeFile(text);
  } catch (error) {
    if (error instanceof ComposeFileError) return error.issues;
    throw error;
  }
  throw new Error("expected a ComposeFileError");
}

describe("parseComposeFile", () => {
  it("returns the document of a valid file, merge keys resolved", () => {
    const document = parseComposeFile(
      "x-base: &base\n  image: nginx\n  restart: always\nservices:\n  web:\n    <<: *base\n    ports: ['80:80']\n",
    );
    expect(document.services).toEqual({ web: { image: "nginx", restart: "always", ports: ["80:80"] } });
  });

  it("reads 0400 as the octal number Go's YAML readers see", () => {
    const document = parseComposeFile(
      "services:\n  web:\n    image: nginx\n    secrets: [{source: s, mode: 0440}]\nsecrets:\n  s: {file: ./s}\n",
    );
    expect((document.services as { web: { secrets: { mode: number }[] } }).web.secrets[0]!.mode).toBe(0o440);
  });

  it("names the key that is not a Compose key", () => {
    expect(issuesOf("services:\n  web:\n    image: nginx\n    privilegd: true\n")).toEqual([
      { path: "services.web.privilegd", message: "is not a Compose key here" },
    ]);
  });

  it("names a value of the wrong type", () => {
    expect(issuesOf("services:\n  web:\n    image: [nginx]\n")).toEqual([
      { path: "services.web.image", message: "must be string" },
    ]);
  });

  it("names the item whose form no branch accepts", () => {
    const issues = issuesOf("services:\n  web:\n    image: nginx\n    ports:\n      - [80]\n");
    expect(issues.map((issue) => issue.path)).toEqual(["services.web.ports.0"]);
  });

  it("names an unknown key inside a long-syntax item", () => {
    const issues = issuesOf(
      "services:\n  web:\n    image: nginx\n    volumes:\n      - type: bind\n        source: /a\n        target: /b\n        sauce: x\n",
    );
    expect(issues.map((issue) => issue.path)).toContain("services.web.volumes.0.sauce");
  });

  it("names the deepest problem inside a oneOf, not every branch that failed", () => {
    expect(issuesOf("services:\n  web:\n    image: nginx\n    networks: {back: {aliases: 5}}\n")).toEqual([
      { path: "services.web.networks.back.aliases", message: "must be array" },
    ]);
    expect(
      issuesOf("services:\n  web:\n    image: nginx\n    depends_on: {db: {condition: sometimes}}\n"),
    ).toEqual([
      { path: "services.web.depends_on.db.condition", message: "must be equal to one of the allowed values" },
    ]);
  });

  it("refuses a service name with characters Compose does not allow", () => {
    expect(issuesOf("services:\n  'web app':\n    image: nginx\n")[0]!.path).toBe("services.web app");
  });

  it.each([
    ["", "the Compose file is empty"],
    ["- a\n- b\n", "a Compose file is a mapping of top-level keys"],
    ["services: [\n", "invalid YAML"],
    ["services:\n  web: {}\n  web: {}\n", "invalid YAML"],
    ["services:\n  web: !!binary aGk=\n", "invalid YAML"],
  ])("refuses %j: %s", (text, message) => {
    expect(issuesOf(text)[0]!.message).toContain(message);
  });

  it("refuses an alias bomb instead of expanding it", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 9; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(", ")}]`);
    }
    expect(issuesOf(`${lines.join("\n")}\nservices: {}\n`)[0]!.message).toContain("invalid YAML");
  });

  it("validates documents built in code", () => {
    expect(validateComposeDocument({ services: { web: { image: "nginx" } } })).toEqual([]);
    expect(validateComposeDocument({ servics: {} })).toEqual([
      { path: "servics", message: "is not a Compose key here" },
    ]);
  });
});
