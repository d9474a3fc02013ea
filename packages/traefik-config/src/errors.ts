/** One problem found in an input or a configuration document: where, and what is wrong. */
export interface ConfigIssue {
  /** Dotted path to the offending value (`domains.0.host`, `http.routers.web.rule`); "" for the whole. */
  path: string;
  message: string;
}

/** Thrown by the generators when their input is refused; `issues` lists every problem. */
export class TraefikConfigError extends Error {
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    super(issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; "));
    this.name = "TraefikConfigError";
    this.issues = issues;
  }
}
