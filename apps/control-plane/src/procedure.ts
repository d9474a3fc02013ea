/**
 * How a spec router declares its procedures: zod input and output, query or mutation, who may
 * call it, and on which editions it exists. The dispatcher and the OpenAPI document read these
 * declarations; nothing about a procedure is written twice.
 *
 * @example
 *   export const projectRouter = defineRouter("project", {
 *     one: query({ input: z.object({ projectId: z.string() }), output: projectSchema, access: "member",
 *       handler: ({ input, caller, ctx }) => findProject(ctx.db, caller, input.projectId) }),
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
  handler: (
    args: HandlerArgs<z.output<In>, Auth>,
  ) => Promise<z.input<Out> | PreparedOutput> | z.input<Out> | PreparedOutput;
}

/**
 * An answer already checked against an output schema and serialized, for answers kept in a
 * cache (projects/tree-cache.ts): the dispatcher sends `json` as it is when `schema` is the
 * procedure's own output schema, and parses `data` as usual otherwise. Deeply frozen, as it is
 * shared by every request it answers.
 */
export class PreparedOutput<T = unknown> {
  private constructor(
    readonly schema: z.ZodType,
    readonly data: T,
    readonly json: string,
  ) {}

  static of<S extends z.ZodType>(schema: S, value: unknown): PreparedOutput<z.output<S>> {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new Error(`a prepared answer does not match its schema: ${z.prettifyError(parsed.error)}`);
    }
    return new PreparedOutput(schema, deepFreeze(parsed.data), JSON.stringify(parsed.data));
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const field of Object.values(value)) deepFreeze(field);
  }
  return value;
}

type Spec<In extends z.ZodType, Out extends z.ZodType, Auth extends Access> = Omit<
  ProcedureDef<In, Out, Auth>,
  "kind"
>;

export function query<In extends z.ZodType, Out extends z.ZodType, const Auth extends Access>(
  spec: Spec<In, Out, Auth>,
): ProcedureDef<In, Out, Auth> {
  return { kind: "query", ...spec, input: strictInput(spec.input) };
}

export function mutation<In extends z.ZodType, Out extends z.ZodType, const Auth extends Access>(
  spec: Spec<In, Out, Auth>,
): ProcedureDef<In, Out, Auth> {
  return { kind: "mutation", ...spec, input: strictInput(spec.input) };
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
}

const wrapperTypes = new Set([
  "optional",
  "nullable",
  "default",
  "prefault",
  "readonly",
  "catch",
  "nonoptional",
]);

/**
 * A copy of an input schema where every object, at any depth, refuses keys it does not declare
 * (zod's `unrecognized_keys`), so no procedure drops a field in silence. Applied to every
 * procedure here, once, at definition; an object declared with `.catchall()`/`.loose()` keeps
 * its explicit choice.
 */
export function strictInput<T extends z.ZodType>(schema: T): T {
  const def = schema._zod.def as unknown as SchemaDef;
  const clone = (changes: Partial<SchemaDef>) => schema.clone({ ...def, ...changes } as never) as T;
  if (def.type === "object" && def.shape) {
    const shape = Object.fromEntries(
      Object.entries(def.shape).map(([key, field]) => [key, strictInput(field)]),
    );
    return clone({ shape, catchall: def.catchall ?? z.never() });
  }
  if (wrapperTypes.has(def.type) && def.innerType) return clone({ innerType: strictInput(def.innerType) });
  if (def.type === "array" && def.element) return clone({ element: strictInput(def.element) });
  if (def.type === "union" && def.options) return clone({ options: def.options.map((o) => strictInput(o)) });
  if (def.type === "record" && def.valueType) return clone({ valueType: strictInput(def.valueType) });
  if (def.type === "pipe" && def.in && def.out) {
    return clone({ in: strictInput(def.in), out: strictInput(def.out) });
  }
  if (def.type === "tuple" && def.items) {
    return clone({
      items: def.items.map((i) => strictInput(i)),
      rest: def.rest ? strictInput(def.rest) : def.rest,
    });
  }
  return schema;
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
