/**
 * Collects what this process writes to stderr (toolgate's JSON log lines,
 * for a toolgate started in process) instead of printing it, until
 * `restore()`.
 */
export function captureStderr(): { readonly lines: string[]; readonly restore: () => void } {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  };
  return { lines, restore: () => void (process.stderr.write = write) };
}
