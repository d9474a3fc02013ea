/** One problem of a Compose file or of the conversion's input: where (dotted path), and what. */
export interface ComposeIssue {
  /** Dotted path to the offending value (`services.web.privileged`, `domains.0.serviceName`); "" for the whole file. */
  path: string;
  message: string;
}

/** Thrown when a Compose file is refused; `issues` lists every problem found. */
export class ComposeFileError extends Error {
  readonly issues: ComposeIssue[];

  constructor(issues: ComposeIssue[]) {
    super(issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; "));
    this.name = "ComposeFileError";
    this.issues = issues;
  }
}

/** Collects issues while a document is walked; `throwIfAny` ends the walk with every one of them. */
export class IssueList {
  readonly issues: ComposeIssue[] = [];

  add(path: (string | number)[] | string, message: string): void {
    this.issues.push({ path: typeof path === "string" ? path : path.join("."), message });
  }

  throwIfAny(): void {
    if (this.issues.length > 0) throw new ComposeFileError(this.issues);
  }
}
