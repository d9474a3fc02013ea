/**
 * How a spec router declares its procedures: zod input and output, query or mutation, who may
 * call it, and on which editions it exists. The dispatcher and the OpenAPI document read these
 * declarations; nothing about a procedure is written twice.
 *
 * @example
 *   export const projectRouter = defineRouter("project", {
 *     one: query({ input: z.object({ projectId: z.string() }), output: projectSchema, access: "member",
 *       handler: ({ input, caller, services }) => findProject(services.db, caller, input.projectId) }),
 *   });
 */
import { z } from "zod";
import type { Edition } from "./config.ts";
import type { Caller, RequestContext } from "./context.ts";

export type Access = "public" | "member" | "admin" | "owner";
export type ProcedureKind = "query" | "mutation";

export interface HandlerArgs<Input, Auth extends Access> extends Omit<RequestContext, "caller"> {
  input: Input;
  caller: Auth extends "public" ? Caller | null : Caller;
}

export interface ProcedureDef<
  In extends z.ZodType = z.ZodType,
  Out extends z.ZodType = z.ZodType,
  Auth extends Access = Access,
> {
  kind: ProcedureKind;
  input: In;
  output: Out;
  access: Auth;
  /** Editions the procedure exists on; absent means every edition. */
  editions?: readonly Edition[];
  summary?: string;
  handler: (args: HandlerArgs<z.output<In>, Auth>) => Promise<z.input<Out>> | z.input<Out>;
}

type Spec<In extends z.ZodType, Out extends z.ZodType, Auth extends Access> = Omit<
  ProcedureDef<In, Out, Auth>,
  "kind"
>;

export function query<In extends z.ZodType, Out extends z.ZodType, const Auth extends Access>(
  spec: Spec<In, Out, Auth>,
): ProcedureDef<In, Out, Auth> {
  return { kind: "query", ...spec };
}

export function mutation<In extends z.ZodType, Out extends z.ZodType, const Auth extends Access>(
  spec: Spec<In, Out, Auth>,
): ProcedureDef<In, Out, Auth> {
  return { kind: "mutation", ...spec };
}

// biome-ignore lint/suspicious/noExplicitAny: a router holds procedures of every input and output type
export type AnyProcedure = ProcedureDef<any, any, any>;

export interface RouterDef {
  name: string;
  procedures: Record<string, AnyProcedure>;
}

export function defineRouter(name: string, procedures: Record<string, AnyProcedure>): RouterDef {
  return { name, procedures };
}

/** The `{success: true}` answer of mutations whose response the spec does not describe. */
export const successSchema = z.object({ success: z.literal(true) });
export const success = { success: true as const };

/** An input with no fields; also accepts an absent input. */
export const noInput = z.object({}).optional();
