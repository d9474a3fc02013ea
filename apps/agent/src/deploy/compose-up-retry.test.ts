import { describe, expect, it } from "vitest";
import { lostOverlayAttachment } from "./stack.ts";

// Docker refuses a container joining an attachable swarm network while the node's last other
// container on it leaves (reproduced here with four `docker run --network` loops on one network;
// seen in CI as a compose deploy's failure). `compose up` runs again only for that answer.
describe("lostOverlayAttachment", () => {
  it.each([
    [
      "ERROR: for stacks-hello-files-untfv2_web  Cannot start service web: network wd00rdqnf6f1zroz0uw8qhdhh not found",
      true,
    ],
    ["ERROR: for web  Cannot start service web: network wd00rdqnf6f1zroz0uw8qhdhh not found", true],
    ["Error response from daemon: network tid27oqkodvp8vmbecbeglflw not found", true],
    // A network the file names that does not exist is the user's error: no second try.
    ["ERROR: Network my-external declared as external, but could not be found.", false],
    ["ERROR: for web  Cannot start service web: network platform-network not found", false],
    ["ERROR: for web  Cannot start service web: driver failed programming external connectivity", false],
  ])("%s → %s", (line, expected) => {
    expect(lostOverlayAttachment(["Creating stacks-x_web ... error", line])).toBe(expected);
  });
});
