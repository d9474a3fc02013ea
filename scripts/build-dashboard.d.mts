/** Types of scripts/build-dashboard.mjs (plain JavaScript so that the build runs it under node). */
export declare const DASHBOARD_OUT_DIR: string;
export declare function buildDashboard(outDir?: string): Promise<void>;
