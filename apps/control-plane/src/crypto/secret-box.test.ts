import { describe, expect, it } from "vitest";
import { SecretBox } from "./secret-box.ts";

const context = { table: "registries", rowId: "r1", organizationId: "o1" };

describe("SecretBox", () => {
  const box = new SecretBox("a-master-secret-that-is-long-enough-000");

  it("round-trips and never repeats a ciphertext", () => {
    const a = box.encrypt("hunter2", context);
    const b = box.encrypt("hunter2", context);
    expect(a).not.toEqual(b);
    expect(a).not.toContain("hunter2");
    expect(box.decrypt(a, context)).toBe("hunter2");
  });

  it("refuses a ciphertext moved to another row or organization", () => {
    const sealed = box.encrypt("hunter2", context);
    expect(() => box.decrypt(sealed, { ...context, rowId: "r2" })).toThrow();
    expect(() => box.decrypt(sealed, { ...context, organizationId: "o2" })).toThrow();
  });

  it("refuses a tampered ciphertext and another key", () => {
    const sealed = box.encrypt("hunter2", context);
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}A`;
    expect(() => box.decrypt(tampered, context)).toThrow();
    expect(() => new SecretBox("another-master-secret-long-enough-0000").decrypt(sealed, context)).toThrow();
  });
});
