import { describe, expect, it } from "vitest";
import { checkKeyPair, generateSshKeyPair } from "./ssh-keys.ts";

describe("generateSshKeyPair", () => {
  // ssh2 writes an unreadable ed25519 key about once in 256 (a public key starting with a zero
  // byte): among 3000 pairs such a key comes up almost surely, and none may be handed out.
  it("every ed25519 pair it hands out is readable and matches", async () => {
    for (let i = 0; i < 3000; i++) {
      const pair = await generateSshKeyPair("ed25519");
      expect(() => checkKeyPair(pair.privateKey, pair.publicKey)).not.toThrow();
    }
  });
});
