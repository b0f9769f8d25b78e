/**
 * A process's output as the lines it wrote. A pipe hands over whatever has been written when it
 * is read — a line in pieces, several lines in one — so a line ends at its newline, never at the
 * end of a read; a line that never ends is passed on in pieces of `maxChars`, so that what is
 * held stays bounded.
 */
export class LineSplitter {
  private pending = '';

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxChars: number,
  ) {}

  /** Text as it was read (decoded: a stream with its encoding set keeps characters whole). */
  add(text: string): void {
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop()!;
    for (const line of parts) this.onLine(line.replace(/\r$/, ''));
    while (this.pending.length > this.maxChars) {
      this.onLine(this.pending.slice(0, this.maxChars));
      this.pending = this.pending.slice(this.maxChars);
    }
  }

  /** The output ended: its last line, unended, is a line too. */
  end(): void {
    if (this.pending) this.onLine(this.pending);
    this.pending = '';
  }
}
