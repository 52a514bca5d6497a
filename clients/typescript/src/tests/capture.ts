// Shared by the runner's tests: run `play` while catching what it says on stderr.
import type { Bot, StreamInfo } from "../index";
import { play } from "../index";

/** `play` with stderr captured: the exit code, stderr's lines, and how long it took. */
export async function playCaptured(
  bot: Bot | ((info: StreamInfo) => Bot),
  env: Record<string, string>,
): Promise<{ code: number; lines: string[]; ms: number }> {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split("\n").filter((line) => line));
    return true;
  }) as typeof process.stderr.write;
  const start = Date.now();
  try {
    const code = await play(bot, { env: { TAVOLO_RECONNECT_SECONDS: "5", ...env } });
    return { code, lines, ms: Date.now() - start };
  } finally {
    process.stderr.write = write;
  }
}
