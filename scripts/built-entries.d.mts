export declare const CONTROL_PLANE_ENTRY: string;
export declare const AGENT_ENTRY: string;
