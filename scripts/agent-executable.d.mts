/** Types of scripts/agent-executable.mjs (plain JavaScript so that the build runs it under node). */
export declare const ARCH_OF_MACHINE: Record<string, string>;
export declare function agentExecutableName(arch: string): string;
export declare function buildAgentExecutable(options: {
  bundle: string;
  node: string;
  output: string;
}): Promise<void>;
export declare function sha256File(file: string): Promise<string>;
