/**
 * Network helpers shared by the agent's and the control plane's tests: a free host port to
 * publish on, and HTTP polling until a service answers as expected.
 */
import { createServer } from "node:net";

/** A TCP port free on every interface (host-mode published ports bind 0.0.0.0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "0.0.0.0", resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** GETs the URL until `accept` takes the answer, or throws with the last one seen. */
export async function waitForHttp(
  url: string,
  accept: (status: number, body: string) => boolean,
  timeoutMs = 30_000,
): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await response.text();
      if (accept(response.status, body)) return { status: response.status, body };
      last = `${response.status} ${body.slice(0, 100)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`${url} did not answer as expected within ${timeoutMs} ms (last: ${last})`);
}

/**
 * The trimmed body served at http://127.0.0.1:<port><pathname> once it equals `expected`, or the
 * last one seen after 30 s ("(no answer)" when nothing answered), for `expect(...).toBe()`.
 */
export async function servedBody(port: number, pathname: string, expected: string): Promise<string> {
  let last = "(no answer)";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${pathname}`, {
        signal: AbortSignal.timeout(2000),
      });
      last = (await response.text()).trim();
      if (last === expected) return last;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}
