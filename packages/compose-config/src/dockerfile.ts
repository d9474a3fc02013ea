/**
 * A Dockerfile written into the Compose file (`build.dockerfile_inline`) read for what reaches
 * past the stack's own sources: `FROM`, `COPY --from` and `RUN --mount=from=` naming an image of
 * the shared engine, `COPY`/`ADD` of absolute or `../` paths, and `ADD` of a URL (the builder
 * fetches it from the engine host's own network, 127.0.0.1 included).
 */

export interface DockerfileProblem {
  /** 1-based line of the instruction. */
  line: number;
  message: string;
}

interface Instruction {
  line: number;
  keyword: string;
  /** The arguments as written, flags (`--from=x`) included. */
  words: string[];
}

const HEREDOC = /<<-?["']?([A-Za-z_][A-Za-z0-9_]*)["']?/;

/** Instructions with their continuation lines joined; comments, blank lines and heredoc bodies left out. */
function instructionsOf(text: string): Instruction[] {
  const lines = text.split(/\r?\n/);
  const instructions: Instruction[] = [];
  for (let index = 0; index < lines.length; index++) {
    const start = index;
    let joined = lines[index]!;
    if (/^\s*(#|$)/.test(joined)) continue;
    while (/\\\s*$/.test(joined) && index + 1 < lines.length) {
      index++;
      joined = `${joined.replace(/\\\s*$/, "")} ${lines[index]}`;
    }
    const words = joined.trim().split(/\s+/);
    instructions.push({ line: start + 1, keyword: words[0]!.toUpperCase(), words: words.slice(1) });
    const heredoc = HEREDOC.exec(joined);
    if (heredoc) {
      while (index + 1 < lines.length && lines[index + 1]!.trim() !== heredoc[1]) index++;
      index++;
    }
  }
  return instructions;
}

/** The arguments of COPY/ADD that are not flags, read from the JSON array form too. */
function pathsOf(words: string[]): string[] {
  const rest = words.filter((word) => !word.startsWith("--"));
  const text = rest.join(" ");
  if (text.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      // Not JSON: read as words.
    }
  }
  return rest;
}

function flagValue(words: string[], flag: string): string | undefined {
  const prefix = `--${flag}=`;
  return words.find((word) => word.startsWith(prefix))?.slice(prefix.length);
}

function leavesContext(source: string): boolean {
  if (source.startsWith("/") || source.startsWith("~")) return true;
  let depth = 0;
  for (const segment of source.split("/")) {
    if (segment === "..") depth--;
    else if (segment !== "." && segment !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}

const REMOTE_SOURCE = /^([a-z][a-z0-9+.-]*:\/\/|git@)/i;

/**
 * Problems of an inline Dockerfile for a tenant. `imageRefusal` says why an image reference is
 * refused (the Compose file's image rule), or undefined when it may be used.
 */
export function dockerfileProblems(
  text: string,
  imageRefusal: (reference: string) => string | undefined,
): DockerfileProblem[] {
  const problems: DockerfileProblem[] = [];
  const stages = new Set<string>();
  let stageCount = 0;
  /** A stage (by name or index), `scratch`, or an image the rule allows. */
  const checkSource = (line: number, what: string, source: string) => {
    const name = source.toLowerCase();
    if (stages.has(name) || (/^\d+$/.test(name) && Number(name) < stageCount) || name === "scratch") return;
    if (source.includes("$")) {
      problems.push({
        line,
        message: `${what} ${source}: a variable cannot be checked here; name the image`,
      });
      return;
    }
    const refusal = imageRefusal(source);
    if (refusal) problems.push({ line, message: `${what} ${source}: ${refusal}` });
  };
  for (const { line, keyword, words } of instructionsOf(text)) {
    if (keyword === "FROM") {
      const [image, as, name] = words.filter((word) => !word.startsWith("--"));
      if (image) checkSource(line, "FROM", image);
      if (as?.toUpperCase() === "AS" && name) stages.add(name.toLowerCase());
      stageCount++;
    } else if (keyword === "COPY" || keyword === "ADD") {
      const from = flagValue(words, "from");
      if (from !== undefined) {
        checkSource(line, `${keyword} --from`, from);
        continue;
      }
      const sources = pathsOf(words).slice(0, -1);
      for (const source of sources) {
        if (source.startsWith("<<")) continue;
        if (REMOTE_SOURCE.test(source)) {
          if (keyword === "ADD") {
            problems.push({
              line,
              message: `ADD ${source}: a URL is fetched from the engine host's own network; fetch it in a RUN step`,
            });
          }
        } else if (leavesContext(source)) {
          problems.push({ line, message: `${keyword} ${source}: a path outside the build context` });
        }
      }
    } else if (keyword === "RUN") {
      for (const word of words) {
        if (!word.startsWith("--mount=")) continue;
        const from = /(?:^|,)from=([^,]+)/.exec(word.slice("--mount=".length))?.[1];
        if (from !== undefined) checkSource(line, "RUN --mount from", from);
      }
    }
  }
  return problems;
}
