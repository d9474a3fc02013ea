/** The parts of Traefik v3's configuration this package generates. */

export type CertificateType = "letsencrypt" | "custom" | "none";

export interface RouterTls {
  certResolver?: string;
  domains?: { main: string; sans?: string[] }[];
}

export interface HttpRouter {
  entryPoints: string[];
  rule: string;
  service: string;
  middlewares?: string[];
  /** Set on every generated router (priorities.ts); Traefik tries higher priorities first. */
  priority: number;
  tls?: RouterTls;
}

export interface HttpService {
  loadBalancer: { servers: { url: string }[]; passHostHeader: boolean };
}

export type HttpMiddleware =
  | { redirectScheme: { scheme: "https"; permanent: boolean } }
  | { redirectRegex: { regex: string; replacement: string; permanent: boolean } }
  | { stripPrefix: { prefixes: string[] } }
  | { addPrefix: { prefix: string } }
  | { basicAuth: { users: string[]; removeHeader: boolean } }
  | { forwardAuth: { address: string; trustForwardHeader: boolean; authResponseHeaders: string[] } };

export interface TlsCertificate {
  certFile: string;
  keyFile: string;
}

/** One service's dynamic configuration (file provider). */
export interface DynamicConfig {
  http: {
    routers: Record<string, HttpRouter>;
    services: Record<string, HttpService>;
    middlewares?: Record<string, HttpMiddleware>;
  };
  tls?: { certificates: TlsCertificate[] };
}

/** The static configuration (traefik.yml). */
export interface StaticConfig {
  global: { checkNewVersion: boolean; sendAnonymousUsage: boolean };
  entryPoints: Record<string, { address: string }>;
  providers: { file: { directory: string; watch: boolean } };
  certificatesResolvers: Record<
    string,
    { acme: { email?: string; storage: string; httpChallenge: { entryPoint: string } } }
  >;
  accessLog?: { filePath: string; format: "json" };
  api?: { dashboard: boolean; insecure: boolean };
}
